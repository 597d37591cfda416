package upstreame2e

import (
	"testing"
	"time"
)

// deployment-policy/batch-state-reset: a policy that resets the batch state
// when a rollout completes, and a Skyhook whose option overrides it.
func TestDeploymentPolicyBatchStateReset(t *testing.T) {
	batchStateReset(newScenario(t, "deployment-policy/batch-state-reset"))
}

// batchStateReset is the body of deployment-policy/batch-state-reset in
// both its forms (deploymentpolicy_forms_test.go).
func batchStateReset(s *scenario) {
	label := s.key("test-node")
	resource := s.resource()

	s.step("reset-state")
	_, _ = s.cli("reset", "test-auto-reset-enabled", "--confirm")
	_, _ = s.cli("reset", "test-override-disabled", "--confirm")
	_, _ = s.kubectl("delete", resource, "test-auto-reset-enabled", "--ignore-not-found")
	_, _ = s.kubectl("delete", resource, "test-override-disabled", "--ignore-not-found")
	_, _ = s.kubectl("delete", "deploymentpolicy", "test-batch-reset-policy", "--ignore-not-found")
	s.cleanAllLabels("tier")
	s.cleanAllLabels(label)

	s.step("setup-nodes")
	s.labelNodes(0, 7, "tier=1", label+"=batch-reset-test")

	s.step("apply-policy")
	s.apply("deployment-policy.yaml")

	s.step("test-auto-reset-enabled")
	s.apply(resource + "-auto-reset.yaml")
	s.sleep(5 * time.Second)
	s.assert("assert-auto-reset-complete.yaml")

	s.step("cleanup-test-1")
	_, _ = s.cli("reset", "test-auto-reset-enabled", "--confirm")
	_, _ = s.kubectl("delete", resource, "test-auto-reset-enabled", "--ignore-not-found", "--wait=true")

	s.step("test-config-precedence")
	if !s.missing("assert-override-complete.yaml") {
		s.apply(resource + "-override-disabled.yaml")
		s.sleep(5 * time.Second)
		s.assert("assert-override-complete.yaml")
	}

	s.step("cleanup")
	s.deleteRef(s.kind.Kind, "test-auto-reset-enabled")
	s.deleteRef(s.kind.Kind, "test-override-disabled")
	s.deletePolicy("test-batch-reset-policy")
	s.cleanAllLabels("tier")
	s.cleanAllLabels(label)
}
