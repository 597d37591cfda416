package upstreame2e

import "testing"

// nodewright/simple-nodewright: skyhook/simple-skyhook for the NodeWright
// kind (NodeWright v0.20's files): three packages (spencer and foobar
// depend on dexter) on the test node, under a LimitRange; the legacy
// skyhook_* metrics, which v0.20 still publishes for a NodeWright, while
// dexter runs and then with all complete. Its stage pod and Job documents
// are NodeWright's machinery (skipped_test.go).
func TestNodeWrightSimpleNodeWright(t *testing.T) {
	s := newScenario(t, "nodewright/simple-nodewright")

	s.step("deploy")
	_, _ = s.cli("reset", "simple-skyhook", "--confirm") // upstream: || true
	s.apply("limitrange.yaml")
	defer s.delete("limitrange.yaml") // finally
	s.apply("nodewright.yaml")
	s.metricsScript(
		"skyhook_node_target_count 1 -t skyhook_name=simple-skyhook",
		"skyhook_package_state_count 1 -t package_name=dexter -t skyhook_name=simple-skyhook -t state=in_progress",
		"skyhook_package_stage_count 1 -t package_name=dexter -t skyhook_name=simple-skyhook -t stage=config",
	)
	s.assert("assert_pods.yaml")
	s.assert("assert_jobs.yaml")
	s.metricsScript(
		"skyhook_package_state_count 1 -t package_name=dexter -t skyhook_name=simple-skyhook -t state=complete",
		"skyhook_package_state_count 1 -t package_name=spencer -t skyhook_name=simple-skyhook -t state=in_progress",
		"skyhook_package_state_count 1 -t package_name=foobar -t skyhook_name=simple-skyhook -t state=in_progress",
		"skyhook_package_stage_count 1 -t package_name=dexter -t skyhook_name=simple-skyhook -t stage=config",
		"skyhook_package_stage_count 1 -t package_name=spencer -t skyhook_name=simple-skyhook -t stage=config",
		"skyhook_package_stage_count 1 -t package_name=foobar -t skyhook_name=simple-skyhook -t stage=config",
	)
	s.assert("assert.yaml")
	if _, err := s.kubectl("wait", "--for=condition=Ready", "nodewright/simple-skyhook", "--timeout=30s"); err != nil {
		t.Errorf("upstream's kubectl wait for Ready failed: %v", err)
	}
	s.metricsScript(
		"skyhook_node_status_count 1 -t skyhook_name=simple-skyhook -t status=complete",
		"skyhook_package_state_count 1 -t package_name=spencer -t skyhook_name=simple-skyhook -t state=complete",
		"skyhook_package_state_count 1 -t package_name=foobar -t skyhook_name=simple-skyhook -t state=complete",
		"skyhook_package_stage_count 1 -t package_name=spencer -t skyhook_name=simple-skyhook -t stage=config",
		"skyhook_package_stage_count 1 -t package_name=foobar -t skyhook_name=simple-skyhook -t stage=config",
		"skyhook_rollout_matched_nodes 1 -t skyhook_name=simple-skyhook -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed",
		"skyhook_rollout_ceiling 1 -t skyhook_name=simple-skyhook -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed",
		"skyhook_rollout_completed 1 -t skyhook_name=simple-skyhook -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed",
		"skyhook_rollout_in_progress 0 -t skyhook_name=simple-skyhook -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed",
		"skyhook_rollout_progress_percent 100 -t skyhook_name=simple-skyhook -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed",
	)
}
