package upstreame2e

import (
	"testing"
	"time"
)

// deployment-policy/linear-strategy: eight nodes in one compartment with a
// linear ramp (1, 2, 3, 4 nodes per batch, at most 4 at once).
func TestDeploymentPolicyLinearStrategy(t *testing.T) {
	linearStrategy(newScenario(t, "deployment-policy/linear-strategy"))
}

// linearStrategy is the body of deployment-policy/linear-strategy in both
// its forms (deploymentpolicy_forms_test.go).
func linearStrategy(s *scenario) {
	const name = "linear-strategy-test"
	tags := s.policyTags(name, "linear-ramp-policy", "production", "linear")
	label := s.key("test-node")

	s.step("reset-state")
	_, _ = s.cli("reset", name, "--confirm")
	s.cleanAllLabels("tier")
	s.cleanAllLabels(label)

	s.step("setup-nodes")
	s.labelNodes(0, 7, "tier=production", label+"="+testNodeValue)

	s.step("apply-resources")
	s.apply("deployment-policy.yaml")
	s.apply(s.rolloutFile())
	s.sleep(10 * time.Second)

	s.step("verify-compartment")
	s.assert("assert-compartment.yaml")
	s.metricsScript(
		s.policyMetric("matched_nodes 8")+tags,
		s.policyMetric("ceiling 4")+tags,
	)

	s.step("track-batch-progression")
	s.assert("assert-batch-1.yaml")
	s.assert("assert-batch-2.yaml")
	s.assertUnlessMissing("assert-batch-3.yaml")
	s.assert("assert-batch-4.yaml")

	s.step("wait-for-completion")
	s.assert("assert-complete.yaml")

	s.step("verify-final-metrics")
	s.metricsScript(
		s.policyMetric("completed 8")+tags,
		s.policyMetric("in_progress 0")+tags,
		s.policyMetric("progress_percent 100")+tags,
		s.policyMetric("consecutive_failures 0")+tags,
	)
	batch, err := s.kubectl("get", s.resource(), name, "-o", "jsonpath={.status.compartmentStatuses.production.batchState.currentBatch}")
	if err != nil {
		s.t.Errorf("reading the current batch: %v", err)
	}
	s.metricsScript(s.policyMetric("current_batch "+batch) + tags)

	s.step("cleanup")
	_, _ = s.cli("reset", name, "--confirm")
	s.cleanAllLabels("tier")
	s.cleanAllLabels(label)
	s.deleteRef(s.kind.Kind, name)
	s.deletePolicy("linear-ramp-policy")
}
