package upstreame2e

import "testing"

// skyhook/failure-skyhook: a package whose stage exits 2 (EXIT_CODE) leaves
// the node erroring, its dependency complete.
func TestSkyhookFailureSkyhook(t *testing.T) {
	s := newScenario(t, "skyhook/failure-skyhook")

	s.step("failure")
	_, _ = s.cli("reset", "failure-skyhook", "--confirm") // upstream: || true
	s.create("skyhook.yaml")
	s.assert("node-assert.yaml")
	s.metricsScript(
		"skyhook_node_target_count 1 -t skyhook_name=failure-skyhook",
		"skyhook_node_status_count 1 -t skyhook_name=failure-skyhook -t status=erroring",
		"skyhook_package_state_count 1 -t package_name=dexter -t skyhook_name=failure-skyhook -t state=complete",
		"skyhook_package_state_count 1 -t package_name=failure -t skyhook_name=failure-skyhook -t state=erroring",
		"skyhook_package_stage_count 1 -t package_name=dexter -t skyhook_name=failure-skyhook -t stage=config",
		"skyhook_package_stage_count 1 -t package_name=failure -t skyhook_name=failure-skyhook -t stage=apply",
	)
}
