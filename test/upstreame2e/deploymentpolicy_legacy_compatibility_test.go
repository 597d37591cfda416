package upstreame2e

import (
	"testing"
	"time"
)

// deployment-policy/legacy-compatibility: a Skyhook with an interruption
// budget and no policy reports one __default__ compartment, policy
// "legacy", strategy fixed.
func TestDeploymentPolicyLegacyCompatibility(t *testing.T) {
	s := newScenario(t, "deployment-policy/legacy-compatibility")
	const name = "legacy-interruption-budget-test"

	s.step("reset-state")
	_, _ = s.cli("reset", name, "--confirm")
	s.cleanAllLabels(testNodeLabel)

	s.step("setup-nodes")
	s.cleanAllLabels(testNodeLabel)
	s.labelNodes(0, 5, testNodeLabel+"="+testNodeValue)

	s.step("apply-skyhook")
	s.apply("skyhook.yaml")
	s.sleep(10 * time.Second)

	s.step("verify-default-compartment")
	s.assert("assert-default-compartment.yaml")

	s.step("verify-metrics")
	s.metricsScript(
		"skyhook_rollout_matched_nodes 6 -t skyhook_name=legacy-interruption-budget-test -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed",
		"skyhook_rollout_ceiling 3 -t skyhook_name=legacy-interruption-budget-test -t policy_name=legacy -t compartment_name=__default__ -t strategy=fixed",
	)

	s.step("cleanup")
	_, _ = s.cli("reset", name, "--confirm")
	s.cleanAllLabels(testNodeLabel)
}
