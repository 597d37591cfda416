package upstreame2e

import (
	"testing"
	"time"
)

// deployment-policy/overlapping-selectors: nodes matched by two
// compartments' selectors go to the more specific one; nodes not yet in a
// batch are waiting.
func TestDeploymentPolicyOverlappingSelectors(t *testing.T) {
	s := newScenario(t, "deployment-policy/overlapping-selectors")
	const name = "overlapping-selectors-test"
	tags := func(compartment, strategy string) string {
		return " -t skyhook_name=overlapping-selectors-test -t policy_name=overlapping-selector-policy -t compartment_name=" + compartment + " -t strategy=" + strategy
	}

	s.step("reset-state")
	_, _ = s.cli("reset", name, "--confirm")
	s.cleanAllLabels("region")
	s.cleanAllLabels("env")
	s.cleanAllLabels(testNodeLabel)

	s.step("setup-nodes")
	s.labelNodes(0, 1, "region=us-west", testNodeLabel+"="+testNodeValue)
	s.labelNodes(2, 3, "env=production", testNodeLabel+"="+testNodeValue)
	s.labelNodes(4, 5, "region=us-west", "env=production", testNodeLabel+"="+testNodeValue)

	s.step("apply-resources")
	s.apply("deployment-policy.yaml")
	s.apply("skyhook.yaml")
	s.sleep(10 * time.Second)

	s.step("verify-compartments")
	s.assert("assert-compartments.yaml")
	s.metricsScript(
		"skyhook_rollout_matched_nodes 2"+tags("us-west", "exponential"),
		"skyhook_rollout_matched_nodes 2"+tags("production", "exponential"),
		"skyhook_rollout_matched_nodes 2"+tags("prod-us-west", "fixed"),
		"skyhook_rollout_ceiling 2"+tags("us-west", "exponential"),
		"skyhook_rollout_ceiling 2"+tags("production", "exponential"),
		"skyhook_rollout_ceiling 1"+tags("prod-us-west", "fixed"),
	)

	s.step("track-batch-progression")
	s.assert("assert-batch-1.yaml")
	s.assert("assert-batch-2.yaml")

	s.step("wait-for-completion")
	s.assert("assert-complete.yaml")

	s.step("verify-final-metrics")
	s.metricsScript(
		"skyhook_rollout_completed 2"+tags("us-west", "exponential"),
		"skyhook_rollout_in_progress 0"+tags("us-west", "exponential"),
		"skyhook_rollout_progress_percent 100"+tags("us-west", "exponential"),
		"skyhook_rollout_completed 2"+tags("production", "exponential"),
		"skyhook_rollout_in_progress 0"+tags("production", "exponential"),
		"skyhook_rollout_progress_percent 100"+tags("production", "exponential"),
		"skyhook_rollout_completed 2"+tags("prod-us-west", "fixed"),
		"skyhook_rollout_in_progress 0"+tags("prod-us-west", "fixed"),
		"skyhook_rollout_progress_percent 100"+tags("prod-us-west", "fixed"),
		"skyhook_rollout_consecutive_failures 0"+tags("us-west", "exponential"),
		"skyhook_rollout_consecutive_failures 0"+tags("production", "exponential"),
		"skyhook_rollout_consecutive_failures 0"+tags("prod-us-west", "fixed"),
	)

	s.step("cleanup")
	_, _ = s.cli("reset", name, "--confirm")
	s.cleanAllLabels("region")
	s.cleanAllLabels("env")
	s.cleanAllLabels(testNodeLabel)
	s.deleteRef("Skyhook", name)
	s.deleteRef("DeploymentPolicy", "overlapping-selector-policy")
}
