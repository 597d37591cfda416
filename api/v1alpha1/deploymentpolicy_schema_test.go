package v1alpha1_test

import (
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func TestDeploymentPolicySchemaRejectsInvalidSpecs(t *testing.T) {
	cases := []rejection{
		{
			name: "budget with percent and count",
			spec: `
  default:
    budget: {percent: 10, count: 2}
`,
			field: "spec.default.budget",
			rule:  "set exactly one of percent and count",
		},
		{
			name: "budget with neither",
			spec: `
  default:
    budget: {}
`,
			field: "spec.default.budget",
			rule:  "set exactly one of percent and count",
		},
		{
			name: "two strategies",
			spec: `
  default:
    budget: {count: 1}
    strategy:
      fixed: {}
      linear: {}
`,
			field: "spec.default.strategy",
			rule:  "set exactly one of fixed, linear and exponential",
		},
		{
			name: "no strategy variant",
			spec: `
  default:
    budget: {count: 1}
    strategy: {}
`,
			field: "spec.default.strategy",
			rule:  "set exactly one of fixed, linear and exponential",
		},
		{
			name: "duplicate compartment names",
			spec: `
  default:
    budget: {count: 1}
  compartments:
  - name: a
    selector: {matchLabels: {x: "1"}}
    budget: {count: 1}
  - name: a
    selector: {matchLabels: {x: "2"}}
    budget: {count: 1}
`,
			field: "spec.compartments[1]",
			rule:  "Duplicate value",
		},
		{
			name: "batch threshold over 100",
			spec: `
  default:
    budget: {count: 1}
    strategy:
      fixed: {batchThreshold: 101}
`,
			field: "spec.default.strategy.fixed.batchThreshold",
			rule:  "should be less than or equal to 100",
		},
		{
			name: "growth factor 1",
			spec: `
  default:
    budget: {count: 1}
    strategy:
      exponential: {growthFactor: 1}
`,
			field: "spec.default.strategy.exponential.growthFactor",
			rule:  "should be greater than or equal to 2",
		},
	}
	requireRejections(t, cases, policyYAML)
}

// Strategy parameters left out get their documented defaults.
func TestDeploymentPolicyDefaultsAreStored(t *testing.T) {
	var got skyhookv1.DeploymentPolicy
	createAndGet(t, k8sClient(t), policyYAML("policy-defaults", `
  default:
    budget: {percent: 20}
    strategy:
      exponential: {}
  compartments:
  - name: linear
    selector: {matchLabels: {pool: a}}
    budget: {count: 2}
    strategy:
      linear: {}
  - name: fixed
    selector: {matchLabels: {pool: b}}
    budget: {count: 1}
    strategy:
      fixed: {}
`), &got)
	wantShared := func(where string, b skyhookv1.BatchSettings) {
		t.Helper()
		if deref(b.InitialBatch) != 1 || deref(b.BatchThreshold) != 100 || deref(b.SafetyLimit) != 50 || b.FailureThreshold != nil {
			t.Errorf("%s: initialBatch=%d batchThreshold=%d safetyLimit=%d failureThreshold=%v; want 1, 100, 50 and unset",
				where, deref(b.InitialBatch), deref(b.BatchThreshold), deref(b.SafetyLimit), b.FailureThreshold)
		}
	}
	exp := got.Spec.Default.Strategy.Exponential
	wantShared("default.exponential", exp.BatchSettings)
	if deref(exp.GrowthFactor) != 2 {
		t.Errorf("growthFactor = %d, want 2", deref(exp.GrowthFactor))
	}
	lin := got.Spec.Compartments[0].Strategy.Linear
	wantShared("linear", lin.BatchSettings)
	if deref(lin.Delta) != 1 {
		t.Errorf("delta = %d, want 1", deref(lin.Delta))
	}
	wantShared("fixed", got.Spec.Compartments[1].Strategy.Fixed.BatchSettings)
	if got.Spec.ResetBatchStateOnCompletion == nil || !*got.Spec.ResetBatchStateOnCompletion {
		t.Errorf("resetBatchStateOnCompletion = %v, want true", got.Spec.ResetBatchStateOnCompletion)
	}
}

func deref(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}
