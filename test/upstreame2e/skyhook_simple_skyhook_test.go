package upstreame2e

import (
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// skyhook/simple-skyhook: three packages (spencer and foobar depend on
// dexter) on the test node, under a LimitRange; the metrics while dexter
// runs, then with all complete.
func TestSkyhookSimpleSkyhook(t *testing.T) {
	simpleRollout(newScenario(t, "skyhook/simple-skyhook"))
}

// simpleRollout is the body of skyhook/simple-skyhook and of its v0.20 twin
// nodewright/simple-nodewright, for the scenario's kind. Both check the
// legacy skyhook_* metrics, which v0.20 still publishes for a NodeWright.
func simpleRollout(s *scenario) {
	s.step("deploy")
	_, _ = s.cli("reset", "simple-skyhook", "--confirm") // upstream: || true
	s.apply("limitrange.yaml")
	defer s.delete("limitrange.yaml") // finally
	s.apply(s.rolloutFile())
	s.metricsScript(
		"skyhook_node_target_count 1 -t skyhook_name=simple-skyhook",
		"skyhook_package_state_count 1 -t package_name=dexter -t skyhook_name=simple-skyhook -t state=in_progress",
		"skyhook_package_stage_count 1 -t package_name=dexter -t skyhook_name=simple-skyhook -t stage=config",
	)
	s.assert("assert_pods.yaml")
	if s.kind == skyhookv1.NodeWrights {
		// Upstream's v0.20 simple-nodewright asserts its stage Jobs too
		// (assert_jobs.yaml, NodeWright's machinery: skipped_test.go);
		// skyhook/simple-skyhook has no such file.
		s.assert("assert_jobs.yaml")
	}
	s.metricsScript(
		"skyhook_package_state_count 1 -t package_name=dexter -t skyhook_name=simple-skyhook -t state=complete",
		"skyhook_package_state_count 1 -t package_name=spencer -t skyhook_name=simple-skyhook -t state=in_progress",
		"skyhook_package_state_count 1 -t package_name=foobar -t skyhook_name=simple-skyhook -t state=in_progress",
		"skyhook_package_stage_count 1 -t package_name=dexter -t skyhook_name=simple-skyhook -t stage=config",
		"skyhook_package_stage_count 1 -t package_name=spencer -t skyhook_name=simple-skyhook -t stage=config",
		"skyhook_package_stage_count 1 -t package_name=foobar -t skyhook_name=simple-skyhook -t stage=config",
	)
	s.assert("assert.yaml")
	if _, err := s.kubectl("wait", "--for=condition=Ready", s.resource()+"/simple-skyhook", "--timeout=30s"); err != nil {
		s.t.Errorf("upstream's kubectl wait for Ready failed: %v", err)
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
