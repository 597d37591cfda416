package upstreame2e

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// upstream's deployment-policy scenarios come in two forms: the
// Skyhook-kind files and NodeWright v0.20's (kept under nodewright-v0.20),
// whose steps differ only in the kind's words: the rollout's manifests and
// kubectl resource (s.resource), the test-node label (s.key), the metrics'
// prefix and name label (policyMetric, policyTags) and the
// DeploymentPolicy's group (deletePolicy). One body runs both; an assert
// file NodeWright's form lacks is skipped with the reason
// (assertUnlessMissing).

// missingNodeWrightFiles are the files of NodeWright v0.20's
// deployment-policy scenarios that are in no stored version that could be
// read (only the Skyhook-kind ones are; test/reference/nodewright-v0.20/README.md),
// by scenario file, with what is therefore not evaluated.
var missingNodeWrightFiles = map[string]string{
	"deployment-policy/linear-strategy/assert-batch-3.yaml": "only the Skyhook-kind one is stored, at 18c449b7: the assert of the third " +
		"batch is not evaluated; the second and fourth are",
	"deployment-policy/multi-compartment/assert-batch-2.yaml": "only the Skyhook-kind one is stored, at f8f4a1a2: the assert of the second " +
		"batch is not evaluated",
	"deployment-policy/batch-state-reset/assert-override-complete.yaml": "only the Skyhook-kind one is stored, at 2c4faaa9: the step that applies " +
		"nodewright-override-disabled.yaml and asserts it is not run; deployment-policy/batch-state-reset runs it for the Skyhook kind",
}

// missing reports whether the scenario's form lacks the file, and says so
// with the reason.
func (s *scenario) missing(file string) bool {
	s.t.Helper()
	if s.kind != skyhookv1.NodeWrights {
		return false
	}
	reason, ok := missingNodeWrightFiles[s.dir+"/"+file]
	if ok {
		s.t.Logf("skipped %s: the NodeWright version is in no stored version that could be read (%s)", file, reason)
	}
	return ok
}

// assertUnlessMissing asserts the file, or says why this form cannot.
func (s *scenario) assertUnlessMissing(file string) {
	s.t.Helper()
	if !s.missing(file) {
		s.assert(file)
	}
}

// policyMetric is the kind's name of one of NodeWright's rollout gauges:
// skyhook_rollout_<x> or nodewright_rollout_<x>.
func (s *scenario) policyMetric(x string) string { return s.resource() + "_rollout_" + x }

// policyTags are the metrics script's tags of a compartment of the
// rollout: its name under the kind's label, the policy, the compartment
// and the strategy.
func (s *scenario) policyTags(rollout, policy, compartment, strategy string) string {
	return " -t " + s.resource() + "_name=" + rollout + " -t policy_name=" + policy + " -t compartment_name=" + compartment + " -t strategy=" + strategy
}

// deletePolicy deletes the kind's DeploymentPolicy of the name, waited for.
func (s *scenario) deletePolicy(name string) {
	s.t.Helper()
	policy := &unstructured.Unstructured{}
	policy.SetGroupVersionKind(s.kind.GroupVersionKind.GroupVersion().WithKind("DeploymentPolicy"))
	policy.SetName(name)
	if err := s.deleteAndWait(policy); err != nil {
		s.t.Errorf("delete DeploymentPolicy %s: %v", name, err)
	}
}
