package upstreame2e

import "testing"

// skyhook/delete-skyhook: a completed Skyhook's metrics are there, and
// gone once it is deleted.
func TestSkyhookDeleteSkyhook(t *testing.T) {
	s := newScenario(t, "skyhook/delete-skyhook")

	s.step("deploy and delete")
	_, _ = s.cli("reset", "delete-skyhook", "--confirm") // upstream: || true
	s.apply("skyhook.yaml")
	defer s.delete("skyhook.yaml") // finally
	s.assert("assert.yaml")
	s.metricsScript(
		"skyhook_node_target_count 1 -t skyhook_name=delete-skyhook",
		"skyhook_node_status_count 1 -t skyhook_name=delete-skyhook -t status=complete",
		"skyhook_package_state_count 1 -t package_name=dexter -t skyhook_name=delete-skyhook -t state=complete",
		"skyhook_package_state_count 1 -t package_name=spencer -t skyhook_name=delete-skyhook -t state=complete",
		"skyhook_package_state_count 1 -t package_name=foobar -t skyhook_name=delete-skyhook -t state=complete",
		"skyhook_package_stage_count 1 -t package_name=dexter -t skyhook_name=delete-skyhook -t stage=config",
		"skyhook_package_stage_count 1 -t package_name=spencer -t skyhook_name=delete-skyhook -t stage=config",
		"skyhook_package_stage_count 1 -t package_name=foobar -t skyhook_name=delete-skyhook -t stage=config",
		"skyhook_rollout_matched_nodes 1 -t skyhook_name=delete-skyhook -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed",
		"skyhook_rollout_completed 1 -t skyhook_name=delete-skyhook -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed",
		"skyhook_rollout_progress_percent 100 -t skyhook_name=delete-skyhook -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed",
	)
	s.delete("skyhook.yaml")
	s.metricsScript(
		"skyhook_node_target_count 1 -t skyhook_name=delete-skyhook --not-found",
		"skyhook_node_status_count 1 -t skyhook_name=delete-skyhook -t status=complete --not-found",
		"skyhook_package_state_count 1 -t package_name=dexter -t skyhook_name=delete-skyhook -t state=complete --not-found",
		"skyhook_package_state_count 1 -t package_name=spencer -t skyhook_name=delete-skyhook -t state=complete --not-found",
		"skyhook_package_state_count 1 -t package_name=foobar -t skyhook_name=delete-skyhook -t state=complete --not-found",
		"skyhook_package_stage_count 1 -t package_name=dexter -t skyhook_name=delete-skyhook -t stage=config --not-found",
		"skyhook_package_stage_count 1 -t package_name=spencer -t skyhook_name=delete-skyhook -t stage=config --not-found",
		"skyhook_package_stage_count 1 -t package_name=foobar -t skyhook_name=delete-skyhook -t stage=config --not-found",
		"skyhook_rollout_matched_nodes 1 -t skyhook_name=delete-skyhook -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed --not-found",
		"skyhook_rollout_ceiling 1 -t skyhook_name=delete-skyhook -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed --not-found",
		"skyhook_rollout_completed 1 -t skyhook_name=delete-skyhook -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed --not-found",
		"skyhook_rollout_progress_percent 100 -t skyhook_name=delete-skyhook -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed --not-found",
	)
}
