package compartment

import (
	"slices"
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

func n(v int32) *int32 { return &v }

// open runs a rollout through batches whose outcomes are given as
// (members, succeeded) pairs and returns the sizes the batches opened with.
func open(s *skyhookv1.DeploymentStrategy, progress int, outcomes ...Outcome) ([]int32, skyhookv1.CompartmentStatus) {
	st := Open(s, skyhookv1.CompartmentStatus{}, Outcome{}, 0)
	sizes := []int32{st.BatchSize}
	for _, o := range outcomes {
		st = Open(s, st, o, progress)
		if st.Halted {
			break
		}
		sizes = append(sizes, st.BatchSize)
	}
	return sizes, st
}

func TestBatchesGrowOnSuccess(t *testing.T) {
	linear := &skyhookv1.DeploymentStrategy{Linear: &skyhookv1.LinearStrategy{BatchSettings: skyhookv1.BatchSettings{InitialBatch: n(1)}, Delta: n(1)}}
	exponential := &skyhookv1.DeploymentStrategy{Exponential: &skyhookv1.ExponentialStrategy{BatchSettings: skyhookv1.BatchSettings{InitialBatch: n(1)}, GrowthFactor: n(2)}}
	fixed := &skyhookv1.DeploymentStrategy{Fixed: &skyhookv1.FixedStrategy{BatchSettings: skyhookv1.BatchSettings{InitialBatch: n(3)}}}
	ok := func(m int) Outcome { return Outcome{Members: m, Succeeded: m} }
	cases := []struct {
		name string
		s    *skyhookv1.DeploymentStrategy
		runs []Outcome
		want []int32
	}{
		{"linear 1, 2, 3, 4", linear, []Outcome{ok(1), ok(2), ok(3)}, []int32{1, 2, 3, 4}},
		{"exponential 1, 2, 4, 8", exponential, []Outcome{ok(1), ok(2), ok(4)}, []int32{1, 2, 4, 8}},
		{"fixed 3", fixed, []Outcome{ok(3), ok(3)}, []int32{3, 3, 3}},
		{"no strategy: one at a time", nil, []Outcome{ok(1)}, []int32{1, 1}},
		{"an empty batch changes nothing", linear, []Outcome{ok(1), {}}, []int32{1, 2, 2}},
	}
	for _, tc := range cases {
		got, st := open(tc.s, 0, tc.runs...)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: sizes %v, want %v", tc.name, got, tc.want)
		}
		if st.Batch != int32(len(tc.want)) {
			t.Errorf("%s: batch number %d after %d batches", tc.name, st.Batch, len(tc.want))
		}
	}
}

func TestFailuresShrinkBatchesAndHalt(t *testing.T) {
	exponential := &skyhookv1.DeploymentStrategy{Exponential: &skyhookv1.ExponentialStrategy{
		BatchSettings: skyhookv1.BatchSettings{InitialBatch: n(4), BatchThreshold: n(75), FailureThreshold: n(2), SafetyLimit: n(50)},
		GrowthFactor:  n(2)}}
	// 3 of 4 meet the 75 % threshold: success, 8. Then 5 of 8 fail it:
	// shrink to 4 and count one failure; 4 of 4 clears the count; two
	// failures in a row halt.
	sizes, st := open(exponential, 10, Outcome{4, 3}, Outcome{8, 5}, Outcome{4, 4}, Outcome{8, 0}, Outcome{4, 0})
	if want := []int32{4, 8, 4, 8, 4}; !slices.Equal(sizes, want) {
		t.Errorf("sizes %v, want %v", sizes, want)
	}
	if !st.Halted || st.ConsecutiveFailures != 2 || st.Batch != 5 {
		t.Errorf("after two failed batches in a row: %+v; want halted at batch 5 with 2 failures", st)
	}
	if again := Open(exponential, st, Outcome{4, 4}, 10); again != st {
		t.Errorf("a halted compartment opened a batch: %+v", again)
	}
	reset := Reset(st)
	if reset.Halted || reset.ConsecutiveFailures != 0 || reset.Batch != 5 {
		t.Errorf("reset %+v; want running again, no failures, batch number kept", reset)
	}
	if st.CurrentBatch() != 5 || reset.CurrentBatch() != 1 {
		t.Errorf("current batch %d before the reset and %d after; want 5 and 1 (counted from the reset)", st.CurrentBatch(), reset.CurrentBatch())
	}
	next := Open(exponential, reset, Outcome{}, 10)
	if next.BatchSize != 4 || next.Batch != 6 {
		t.Errorf("after a reset the batch opened with %d as number %d; want initialBatch 4 as number 6", next.BatchSize, next.Batch)
	}
	if next.CurrentBatch() != 1 || Open(exponential, next, Outcome{4, 4}, 10).CurrentBatch() != 2 {
		t.Errorf("the batches after a reset are numbered %d, %d; want 1, 2", next.CurrentBatch(), Open(exponential, next, Outcome{4, 4}, 10).CurrentBatch())
	}
}

func TestFailuresPastTheSafetyLimitChangeNothing(t *testing.T) {
	linear := &skyhookv1.DeploymentStrategy{Linear: &skyhookv1.LinearStrategy{
		BatchSettings: skyhookv1.BatchSettings{InitialBatch: n(3), FailureThreshold: n(1), SafetyLimit: n(50)}, Delta: n(2)}}
	sizes, st := open(linear, 60, Outcome{3, 1}, Outcome{3, 0})
	if want := []int32{3, 3, 3}; !slices.Equal(sizes, want) || st.Halted || st.ConsecutiveFailures != 0 {
		t.Errorf("past the safety limit: sizes %v, state %+v; want 3, 3, 3 and no halt", sizes, st)
	}
	sizes, st = open(linear, 40, Outcome{3, 1})
	if !st.Halted || len(sizes) != 1 {
		t.Errorf("below the safety limit, failureThreshold 1: sizes %v, state %+v; want halted after the first batch", sizes, st)
	}
}

func TestRoomStaysWithinTheBudget(t *testing.T) {
	budget := skyhookv1.DeploymentBudget{Count: n(2)}
	if got := Room(budget, 10, 0, 8); got != 2 {
		t.Errorf("the budget does not cap the batch: %d", got)
	}
	if got := Room(budget, 10, 1, 8); got != 1 {
		t.Errorf("an erroring node does not take its slot: %d", got)
	}
	if got := Room(budget, 10, 3, 8); got != 0 {
		t.Errorf("room below zero: %d", got)
	}
	percent := skyhookv1.DeploymentBudget{Percent: n(25)}
	if got := Room(percent, 10, 0, 8); got != 2 {
		t.Errorf("25%% of 10 nodes: %d, want 2", got)
	}
}
