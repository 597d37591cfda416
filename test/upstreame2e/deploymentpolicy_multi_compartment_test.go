package upstreame2e

import (
	"testing"
	"time"
)

// deployment-policy/multi-compartment: fifteen nodes in three compartments,
// each with its own budget and exponential strategy.
func TestDeploymentPolicyMultiCompartment(t *testing.T) {
	s := newScenario(t, "deployment-policy/multi-compartment")
	const name = "multi-compartment-test"
	tags := func(compartment string) string {
		return " -t skyhook_name=multi-compartment-test -t policy_name=multi-tier-policy -t compartment_name=" + compartment + " -t strategy=exponential"
	}

	s.step("reset-state")
	_, _ = s.cli("reset", name, "--confirm")
	s.cleanAllLabels("priority")
	s.cleanAllLabels(testNodeLabel)

	s.step("setup-nodes")
	s.labelNodes(0, 4, "priority=critical", testNodeLabel+"="+testNodeValue)
	s.labelNodes(5, 10, "priority=standard", testNodeLabel+"="+testNodeValue)
	s.labelNodes(11, 14, "priority=test", testNodeLabel+"="+testNodeValue)

	s.step("apply-resources")
	s.apply("deployment-policy.yaml")
	s.apply("skyhook.yaml")
	s.sleep(10 * time.Second)

	s.step("verify-compartments")
	s.assert("assert-compartments.yaml")
	s.metricsScript(
		"skyhook_rollout_matched_nodes 5"+tags("critical"),
		"skyhook_rollout_matched_nodes 6"+tags("standard"),
		"skyhook_rollout_matched_nodes 4"+tags("test"),
	)
	s.metricsScript(
		"skyhook_rollout_ceiling 2"+tags("critical"),
		"skyhook_rollout_ceiling 1"+tags("standard"),
		"skyhook_rollout_ceiling 2"+tags("test"),
	)

	s.step("track-batch-progression")
	s.assert("assert-batch-1.yaml")
	s.assert("assert-batch-2.yaml")

	s.step("wait-for-completion")
	s.assert("assert-complete.yaml")

	s.step("verify-final-metrics")
	s.metricsScript(
		"skyhook_rollout_completed 5"+tags("critical"),
		"skyhook_rollout_in_progress 0"+tags("critical"),
		"skyhook_rollout_progress_percent 100"+tags("critical"),
		"skyhook_rollout_completed 6"+tags("standard"),
		"skyhook_rollout_in_progress 0"+tags("standard"),
		"skyhook_rollout_progress_percent 100"+tags("standard"),
		"skyhook_rollout_completed 4"+tags("test"),
		"skyhook_rollout_in_progress 0"+tags("test"),
		"skyhook_rollout_progress_percent 100"+tags("test"),
		"skyhook_rollout_consecutive_failures 0"+tags("critical"),
		"skyhook_rollout_consecutive_failures 0"+tags("standard"),
		"skyhook_rollout_consecutive_failures 0"+tags("test"),
	)

	s.step("cleanup")
	_, _ = s.cli("reset", name, "--confirm")
	s.cleanAllLabels("priority")
	s.cleanAllLabels(testNodeLabel)
	s.deleteRef("Skyhook", name)
	s.deleteRef("DeploymentPolicy", "multi-tier-policy")
}
