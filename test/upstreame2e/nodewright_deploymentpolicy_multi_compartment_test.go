package upstreame2e

import "testing"

// deployment-policy/multi-compartment in NodeWright form (NodeWright v0.20's
// files, kept under test/reference/nodewright-v0.20): fifteen nodes in three
// compartments of a nodewright.nvidia.com DeploymentPolicy, each with its
// own budget and exponential strategy, and the nodewright_rollout_*
// metrics; the second batch's assert is not in the stored files
// (missingNodeWrightFiles).
func TestNodeWrightDeploymentPolicyMultiCompartment(t *testing.T) {
	multiCompartment(newScenarioIn(t, "nodewright-v0.20", "deployment-policy/multi-compartment"))
}
