// Package compartment applies a DeploymentPolicy to a rollout: it puts each
// node in one compartment, sizes the compartment's batches and decides,
// from how the last batch went, whether the next one opens.
//
// A compartment works in batches: a batch opens only when none of its
// nodes is still running a stage, and it is judged when it opens the next
// one. Its members are the nodes whose batch annotation carries its number;
// those complete succeeded, those erroring failed. A batch with at least
// batchThreshold percent successes grows the next batch (linear by delta,
// exponential by growthFactor) and clears the failure count. A failed batch,
// while fewer than safetyLimit percent of the compartment's nodes are
// complete, shrinks the next batch and counts toward failureThreshold, which
// halts the compartment when reached; past the safety limit a failure
// changes nothing. The budget caps every batch, counting erroring nodes
// still being retried.
package compartment

import (
	"math"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Of returns the compartment of a node: the one whose selector matches it
// with the most requirements (the most specific), ties by name; the default
// compartment when none matches.
func Of(policy *skyhookv1.DeploymentPolicy, node *corev1.Node) string {
	best, bestReqs := skyhookv1.DefaultCompartmentName, -1
	names := make([]int, len(policy.Spec.Compartments))
	for i := range names {
		names[i] = i
	}
	sort.Slice(names, func(a, b int) bool {
		return policy.Spec.Compartments[names[a]].Name < policy.Spec.Compartments[names[b]].Name
	})
	for _, i := range names {
		c := &policy.Spec.Compartments[i]
		sel, err := metav1.LabelSelectorAsSelector(&c.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(node.Labels)) {
			continue
		}
		reqs, _ := sel.Requirements()
		if len(reqs) > bestReqs {
			best, bestReqs = c.Name, len(reqs)
		}
	}
	return best
}

// Settings returns the budget and strategy of a compartment.
func Settings(policy *skyhookv1.DeploymentPolicy, name string) (skyhookv1.DeploymentBudget, *skyhookv1.DeploymentStrategy) {
	for _, c := range policy.Spec.Compartments {
		if c.Name == name {
			return c.Budget, c.Strategy
		}
	}
	return policy.Spec.Default.Budget, policy.Spec.Default.Strategy
}

// Outcome is how the members of a batch ended.
type Outcome struct {
	Members, Succeeded int
}

// Open judges the batch st describes by last and opens the next one: its
// number and size, and the failure count. It returns st halted, with the
// same batch number, when the failures reach the strategy's
// failureThreshold. progress is the percentage of the compartment's nodes
// that are complete. A halted st stays halted.
func Open(s *skyhookv1.DeploymentStrategy, st skyhookv1.CompartmentStatus, last Outcome, progress int) skyhookv1.CompartmentStatus {
	if st.Halted {
		return st
	}
	set := settingsOf(s)
	switch {
	case st.BatchSize == 0: // the first batch, or the first after a reset
		st.BatchSize = set.initial
	case last.Members == 0: // nothing started in it: judge nothing
	case last.Succeeded*100 >= int(set.threshold)*last.Members:
		st.ConsecutiveFailures = 0
		st.BatchSize = set.grow(st.BatchSize)
	case progress < int(set.safety):
		st.ConsecutiveFailures++
		st.BatchSize = set.shrink(st.BatchSize)
		if set.failureThreshold > 0 && st.ConsecutiveFailures >= set.failureThreshold {
			st.Halted = true
			return st
		}
	}
	st.Batch++
	return st
}

// Reset starts batch sizing and failure counting over. The batch number
// keeps growing, so nodes of earlier batches are never taken for members of
// a new one; the batches are counted from here again (CurrentBatch).
func Reset(st skyhookv1.CompartmentStatus) skyhookv1.CompartmentStatus {
	st.BatchSize, st.ConsecutiveFailures, st.Halted = 0, 0, false
	st.BatchOffset = st.Batch
	return st
}

// Room is how many nodes may start in a batch of the given size: the
// budget's cap over the compartment's nodes, less the active ones.
func Room(b skyhookv1.DeploymentBudget, nodes, active int, size int32) int {
	return max(0, min(capOf(b, nodes)-active, int(size)))
}

// Cap is the budget's cap on a compartment of nodes: how many may be in
// progress at once.
func Cap(b skyhookv1.DeploymentBudget, nodes int) int { return capOf(b, nodes) }

// capOf is the budget's cap: count, or percent of the nodes rounded down
// and at least one.
func capOf(b skyhookv1.DeploymentBudget, nodes int) int {
	if b.Count != nil {
		return int(*b.Count)
	}
	if b.Percent != nil {
		return max(1, nodes*int(*b.Percent)/100)
	}
	return nodes
}

// settings are a strategy's values with their defaults filled in.
type settings struct {
	initial, threshold, safety, failureThreshold int32
	grow, shrink                                 func(int32) int32
}

func settingsOf(s *skyhookv1.DeploymentStrategy) settings {
	same := func(n int32) int32 { return n }
	set := settings{initial: 1, threshold: 100, safety: 50, grow: same, shrink: same}
	var shared *skyhookv1.BatchSettings
	switch {
	case s == nil:
		return set
	case s.Fixed != nil:
		shared = &s.Fixed.BatchSettings
	case s.Linear != nil:
		shared = &s.Linear.BatchSettings
		delta := value(s.Linear.Delta, 1)
		set.grow = func(n int32) int32 { return saturate(int64(n) + int64(delta)) }
		set.shrink = func(n int32) int32 { return max(1, n-delta) }
	case s.Exponential != nil:
		shared = &s.Exponential.BatchSettings
		factor := value(s.Exponential.GrowthFactor, 2)
		set.grow = func(n int32) int32 { return saturate(int64(n) * int64(factor)) }
		set.shrink = func(n int32) int32 { return max(1, n/factor) }
	default:
		return set
	}
	set.initial = value(shared.InitialBatch, 1)
	set.threshold = value(shared.BatchThreshold, 100)
	set.safety = value(shared.SafetyLimit, 50)
	set.failureThreshold = value(shared.FailureThreshold, 0)
	return set
}

// saturate keeps a grown batch size within int32; the budget caps it far
// below anyway.
func saturate(n int64) int32 {
	return int32(min(n, math.MaxInt32))
}

func value(p *int32, fallback int32) int32 {
	if p == nil || *p < 1 {
		return fallback
	}
	return *p
}
