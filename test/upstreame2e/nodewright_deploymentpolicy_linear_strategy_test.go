package upstreame2e

import "testing"

// deployment-policy/linear-strategy in NodeWright form (NodeWright v0.20's
// files, kept under test/reference/nodewright-v0.20): eight nodes in one
// compartment of a nodewright.nvidia.com DeploymentPolicy with a linear
// ramp (1, 2, 3, 4 nodes per batch, at most 4 at once), and the
// nodewright_rollout_* metrics; the third batch's assert is not in the
// stored files (missingNodeWrightFiles).
func TestNodeWrightDeploymentPolicyLinearStrategy(t *testing.T) {
	linearStrategy(newScenarioIn(t, "nodewright-v0.20", "deployment-policy/linear-strategy"))
}
