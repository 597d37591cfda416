package validate

import (
	"testing"

	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func policyFrom(t testing.TB, spec string) *skyhookv1.DeploymentPolicy {
	t.Helper()
	dp := &skyhookv1.DeploymentPolicy{}
	if err := yaml.UnmarshalStrict([]byte("metadata: {name: test}\nspec:\n"+spec), dp); err != nil {
		t.Fatal(err)
	}
	return dp
}

func TestDeploymentPolicyValidation(t *testing.T) {
	cases := []struct {
		name, spec string
		want       []string
	}{
		{"valid", `
  default: {budget: {percent: 25}, strategy: {exponential: {growthFactor: 2}}}
  compartments:
  - {name: canary, selector: {matchLabels: {canary: "true"}}, budget: {count: 1}}
  - {name: rest, selector: {matchExpressions: [{key: pool, operator: In, values: [a, b]}]}, budget: {percent: 10}, strategy: {linear: {delta: 2}}}
`, nil},
		{"budget with both and with neither", `
  default: {budget: {percent: 10, count: 2}}
  compartments:
  - {name: one, selector: {matchLabels: {x: "1"}}, budget: {}}
`, []string{
			"spec.default.budget: set exactly one of percent and count",
			"spec.compartments[0].budget: set exactly one of percent and count",
		}},
		{"strategies", `
  default: {budget: {count: 1}, strategy: {fixed: {}, linear: {}}}
  compartments:
  - {name: one, selector: {matchLabels: {x: "1"}}, budget: {count: 1}, strategy: {}}
  - {name: two, selector: {matchLabels: {x: "2"}}, budget: {count: 1}, strategy: {exponential: {growthFactor: 1, safetyLimit: 0}}}
`, []string{
			"spec.default.strategy: set exactly one of fixed, linear and exponential",
			"spec.compartments[0].strategy: set exactly one of fixed, linear and exponential",
			"spec.compartments[1].strategy.exponential.growthFactor: must be at least 2",
			"spec.compartments[1].strategy.exponential.safetyLimit: must be between 1 and 100",
		}},
		{"interrupt window", `
  default: {budget: {count: 1}}
  interruptWindow: {days: [Mon], start: "22:00", end: "04:00", timeZone: Mars/Olympus}
`, []string{
			`spec.interruptWindow: Invalid value: {"days":["Mon"],"start":"22:00","end":"04:00","timeZone":"Mars/Olympus"}: timeZone: "Mars/Olympus" is not an IANA time zone`,
		}},
		{"compartment names", `
  default: {budget: {count: 1}}
  compartments:
  - {name: __default__, selector: {matchLabels: {x: "1"}}, budget: {count: 1}}
  - {name: same, selector: {matchLabels: {x: "2"}}, budget: {count: 1}}
  - {name: same, selector: {matchLabels: {x: "3"}}, budget: {count: 1}}
`, []string{
			"spec.compartments[0].name: is reserved",
			"spec.compartments[2].name: Duplicate value",
		}},
		{"selectors", `
  default: {budget: {count: 1}}
  compartments:
  - {name: one, selector: {matchLabels: {pool: a}}, budget: {count: 1}}
  - {name: two, selector: {matchExpressions: [{key: pool, operator: In, values: [a]}]}, budget: {count: 1}}
  - {name: three, selector: {}, budget: {count: 1}}
  - {name: four, selector: {matchExpressions: [{key: pool, operator: In}]}, budget: {count: 1}}
`, []string{
			"spec.compartments[1].selector: Duplicate value",
			"spec.compartments[2].selector: Required value",
			"spec.compartments[3].selector.matchExpressions[0].values: Required value",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireErrors(t, DeploymentPolicy(policyFrom(t, tc.spec)), tc.want...)
		})
	}
}

func FuzzDeploymentPolicy(f *testing.F) {
	f.Add([]byte(`{"spec":{"default":{"budget":{"percent":0,"count":0},"strategy":{"linear":{"delta":-1}}},"compartments":[{"name":"","selector":{"matchExpressions":[{"operator":"Exists","values":["x"]}]}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dp := &skyhookv1.DeploymentPolicy{}
		if err := yaml.Unmarshal(data, dp); err != nil {
			return
		}
		requireNamedErrors(t, DeploymentPolicy(dp))
	})
}
