package compartment

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func policy(t *testing.T, spec string) *skyhookv1.DeploymentPolicy {
	t.Helper()
	p := &skyhookv1.DeploymentPolicy{}
	if err := yaml.UnmarshalStrict([]byte("spec:\n"+spec), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOfPicksTheMostSpecificCompartment(t *testing.T) {
	p := policy(t, `
  default: {budget: {count: 1}}
  compartments:
  - {name: gpu, selector: {matchLabels: {gpu: "true"}}, budget: {count: 2}}
  - {name: gpu-canary, selector: {matchLabels: {gpu: "true", canary: "true"}}, budget: {count: 1}}
  - {name: also-gpu, selector: {matchExpressions: [{key: gpu, operator: Exists}]}, budget: {count: 3}}
`)
	node := func(l map[string]string) *corev1.Node { return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: l}} }
	cases := []struct {
		labels map[string]string
		want   string
	}{
		{map[string]string{"gpu": "true", "canary": "true"}, "gpu-canary"},
		{map[string]string{"gpu": "true"}, "also-gpu"}, // same specificity as gpu: the name first
		{map[string]string{"cpu": "true"}, skyhookv1.DefaultCompartmentName},
	}
	for _, tc := range cases {
		if got := Of(p, node(tc.labels)); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.labels, got, tc.want)
		}
	}
}

func TestBatchSizes(t *testing.T) {
	n := func(v int32) *int32 { return &v }
	linear := &skyhookv1.DeploymentStrategy{Linear: &skyhookv1.LinearStrategy{BatchSettings: skyhookv1.BatchSettings{InitialBatch: n(1)}, Delta: n(1)}}
	exponential := &skyhookv1.DeploymentStrategy{Exponential: &skyhookv1.ExponentialStrategy{BatchSettings: skyhookv1.BatchSettings{InitialBatch: n(1)}, GrowthFactor: n(2)}}
	fixed := &skyhookv1.DeploymentStrategy{Fixed: &skyhookv1.FixedStrategy{BatchSettings: skyhookv1.BatchSettings{InitialBatch: n(3)}}}
	cases := []struct {
		name     string
		s        *skyhookv1.DeploymentStrategy
		complete []int
		want     []int
	}{
		{"linear 1, 2, 3, 4", linear, []int{0, 1, 3, 6}, []int{1, 2, 3, 4}},
		{"exponential 1, 2, 4, 8", exponential, []int{0, 1, 3, 7}, []int{1, 2, 4, 8}},
		{"fixed 3", fixed, []int{0, 3, 6}, []int{3, 3, 3}},
		{"no strategy: one at a time", nil, []int{0, 5}, []int{1, 1}},
	}
	for _, tc := range cases {
		for i, c := range tc.complete {
			if got := batchSize(tc.s, c); got != tc.want[i] {
				t.Errorf("%s: after %d complete, batch %d, want %d", tc.name, c, got, tc.want[i])
			}
		}
	}
	budget := skyhookv1.DeploymentBudget{Count: n(2)}
	if got := Start(budget, exponential, 10, 3, 0); got != 2 {
		t.Errorf("the budget does not cap the batch: %d", got)
	}
	if got := Start(budget, linear, 10, 1, 1); got != 0 {
		t.Errorf("a batch started while the previous one runs: %d", got)
	}
}
