package upstreame2e

import "testing"

// deployment-policy/batch-state-reset in NodeWright form (NodeWright v0.20's
// files, kept under test/reference/nodewright-v0.20): a
// nodewright.nvidia.com DeploymentPolicy that resets the batch state when a
// rollout completes. Its precedence step is not run: its assert is not in
// the stored files (missingNodeWrightFiles).
func TestNodeWrightDeploymentPolicyBatchStateReset(t *testing.T) {
	batchStateReset(newScenarioIn(t, "nodewright-v0.20", "deployment-policy/batch-state-reset"))
}
