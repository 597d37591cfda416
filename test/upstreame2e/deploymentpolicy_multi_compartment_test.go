package upstreame2e

import (
	"testing"
	"time"
)

// deployment-policy/multi-compartment: fifteen nodes in three compartments,
// each with its own budget and exponential strategy.
func TestDeploymentPolicyMultiCompartment(t *testing.T) {
	multiCompartment(newScenario(t, "deployment-policy/multi-compartment"))
}

// multiCompartment is the body of deployment-policy/multi-compartment in
// both its forms (deploymentpolicy_forms_test.go). NodeWright's form
// checks two of the metrics in a script of their own; the checks are the
// same.
func multiCompartment(s *scenario) {
	const name = "multi-compartment-test"
	tags := func(compartment string) string {
		return s.policyTags(name, "multi-tier-policy", compartment, "exponential")
	}
	label := s.key("test-node")

	s.step("reset-state")
	_, _ = s.cli("reset", name, "--confirm")
	s.cleanAllLabels("priority")
	s.cleanAllLabels(label)

	s.step("setup-nodes")
	s.labelNodes(0, 4, "priority=critical", label+"="+testNodeValue)
	s.labelNodes(5, 10, "priority=standard", label+"="+testNodeValue)
	s.labelNodes(11, 14, "priority=test", label+"="+testNodeValue)

	s.step("apply-resources")
	s.apply("deployment-policy.yaml")
	s.apply(s.rolloutFile())
	s.sleep(10 * time.Second)

	s.step("verify-compartments")
	s.assert("assert-compartments.yaml")
	s.metricsScript(
		s.policyMetric("matched_nodes 5")+tags("critical"),
		s.policyMetric("matched_nodes 6")+tags("standard"),
		s.policyMetric("matched_nodes 4")+tags("test"),
	)
	s.metricsScript(
		s.policyMetric("ceiling 2")+tags("critical"),
		s.policyMetric("ceiling 1")+tags("standard"),
		s.policyMetric("ceiling 2")+tags("test"),
	)

	s.step("track-batch-progression")
	s.assert("assert-batch-1.yaml")
	s.assertUnlessMissing("assert-batch-2.yaml")

	s.step("wait-for-completion")
	s.assert("assert-complete.yaml")

	s.step("verify-final-metrics")
	var final []string
	for _, c := range []struct {
		compartment string
		nodes       string
	}{{"critical", "5"}, {"standard", "6"}, {"test", "4"}} {
		final = append(final,
			s.policyMetric("completed "+c.nodes)+tags(c.compartment),
			s.policyMetric("in_progress 0")+tags(c.compartment),
			s.policyMetric("progress_percent 100")+tags(c.compartment))
	}
	for _, compartment := range []string{"critical", "standard", "test"} {
		final = append(final, s.policyMetric("consecutive_failures 0")+tags(compartment))
	}
	s.metricsScript(final...)

	s.step("cleanup")
	_, _ = s.cli("reset", name, "--confirm")
	s.cleanAllLabels("priority")
	s.cleanAllLabels(label)
	s.deleteRef(s.kind.Kind, name)
	s.deletePolicy("multi-tier-policy")
}
