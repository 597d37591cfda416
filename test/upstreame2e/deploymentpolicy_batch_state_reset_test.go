package upstreame2e

import (
	"testing"
	"time"
)

// deployment-policy/batch-state-reset: a policy that resets the batch state
// when a rollout completes, and a Skyhook whose option overrides it.
func TestDeploymentPolicyBatchStateReset(t *testing.T) {
	s := newScenario(t, "deployment-policy/batch-state-reset")

	s.step("reset-state")
	_, _ = s.cli("reset", "test-auto-reset-enabled", "--confirm")
	_, _ = s.cli("reset", "test-override-disabled", "--confirm")
	_, _ = s.kubectl("delete", "skyhook", "test-auto-reset-enabled", "--ignore-not-found")
	_, _ = s.kubectl("delete", "skyhook", "test-override-disabled", "--ignore-not-found")
	_, _ = s.kubectl("delete", "deploymentpolicy", "test-batch-reset-policy", "--ignore-not-found")
	s.cleanAllLabels("tier")
	s.cleanAllLabels(testNodeLabel)

	s.step("setup-nodes")
	s.labelNodes(0, 7, "tier=1", testNodeLabel+"=batch-reset-test")

	s.step("apply-policy")
	s.apply("deployment-policy.yaml")

	s.step("test-auto-reset-enabled")
	s.apply("skyhook-auto-reset.yaml")
	s.sleep(5 * time.Second)
	s.assert("assert-auto-reset-complete.yaml")

	s.step("cleanup-test-1")
	_, _ = s.cli("reset", "test-auto-reset-enabled", "--confirm")
	_, _ = s.kubectl("delete", "skyhook", "test-auto-reset-enabled", "--ignore-not-found", "--wait=true")

	s.step("test-config-precedence")
	s.apply("skyhook-override-disabled.yaml")
	s.sleep(5 * time.Second)
	s.assert("assert-override-complete.yaml")

	s.step("cleanup")
	s.deleteRef("Skyhook", "test-auto-reset-enabled")
	s.deleteRef("Skyhook", "test-override-disabled")
	s.deleteRef("DeploymentPolicy", "test-batch-reset-policy")
	s.cleanAllLabels("tier")
	s.cleanAllLabels(testNodeLabel)
}
