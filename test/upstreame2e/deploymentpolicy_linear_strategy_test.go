package upstreame2e

import (
	"testing"
	"time"
)

// deployment-policy/linear-strategy: eight nodes in one compartment with a
// linear ramp (1, 2, 3, 4 nodes per batch, at most 4 at once).
func TestDeploymentPolicyLinearStrategy(t *testing.T) {
	s := newScenario(t, "deployment-policy/linear-strategy")
	const name = "linear-strategy-test"
	const tags = " -t skyhook_name=linear-strategy-test -t policy_name=linear-ramp-policy -t compartment_name=production -t strategy=linear"

	s.step("reset-state")
	_, _ = s.cli("reset", name, "--confirm")
	s.cleanAllLabels("tier")
	s.cleanAllLabels(testNodeLabel)

	s.step("setup-nodes")
	s.labelNodes(0, 7, "tier=production", testNodeLabel+"="+testNodeValue)

	s.step("apply-resources")
	s.apply("deployment-policy.yaml")
	s.apply("skyhook.yaml")
	s.sleep(10 * time.Second)

	s.step("verify-compartment")
	s.assert("assert-compartment.yaml")
	s.metricsScript(
		"skyhook_rollout_matched_nodes 8"+tags,
		"skyhook_rollout_ceiling 4"+tags,
	)

	s.step("track-batch-progression")
	s.assert("assert-batch-1.yaml")
	s.assert("assert-batch-2.yaml")
	s.assert("assert-batch-3.yaml")
	s.assert("assert-batch-4.yaml")

	s.step("wait-for-completion")
	s.assert("assert-complete.yaml")

	s.step("verify-final-metrics")
	s.metricsScript(
		"skyhook_rollout_completed 8"+tags,
		"skyhook_rollout_in_progress 0"+tags,
		"skyhook_rollout_progress_percent 100"+tags,
		"skyhook_rollout_consecutive_failures 0"+tags,
	)
	batch, err := s.kubectl("get", "skyhook", name, "-o", "jsonpath={.status.compartmentStatuses.production.batchState.currentBatch}")
	if err != nil {
		t.Errorf("reading the current batch: %v", err)
	}
	s.metricsScript("skyhook_rollout_current_batch " + batch + tags)

	s.step("cleanup")
	_, _ = s.cli("reset", name, "--confirm")
	s.cleanAllLabels("tier")
	s.cleanAllLabels(testNodeLabel)
	s.deleteRef("Skyhook", name)
	s.deleteRef("DeploymentPolicy", "linear-ramp-policy")
}
