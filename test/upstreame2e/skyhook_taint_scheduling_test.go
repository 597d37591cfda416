package upstreame2e

import "testing"

// skyhook/taint-scheduling: the test node tainted nvidia.com/gpu:NoSchedule
// blocks a Skyhook that does not tolerate it; a patch adding the
// toleration lets it complete.
func TestSkyhookTaintScheduling(t *testing.T) {
	s := newScenario(t, "skyhook/taint-scheduling")
	const selector = testNodeLabel + "=" + testNodeValue

	s.step("taint scheduling")
	_, _ = s.cli("reset", "taint-scheduling", "--confirm") // upstream: || true
	s.taintNodes("all", "nvidia.com/gpu:NoSchedule", selector)
	defer s.untaintNodes("all", "nvidia.com/gpu:NoSchedule", selector) // finally
	s.create("skyhook.yaml")
	s.assert("assert.yaml")
	s.metricsScript(
		"skyhook_node_target_count 1 -t skyhook_name=taint-scheduling",
		"skyhook_node_status_count 1 -t skyhook_name=taint-scheduling -t status=blocked",
		"skyhook_node_status_count 1 -t skyhook_name=taint-scheduling -t status=blocked",
	)
	s.patch("update-skyhook.yaml")
	s.assert("assert-update.yaml")
	s.metricsScript(
		"skyhook_node_target_count 1 -t skyhook_name=taint-scheduling",
		"skyhook_node_status_count 1 -t skyhook_name=taint-scheduling -t status=complete",
		"skyhook_node_status_count 0 -t skyhook_name=taint-scheduling -t status=blocked",
	)
}
