// Package compartment applies a DeploymentPolicy to a rollout: it puts each
// node in one compartment and says how many of a compartment's nodes may
// start now.
//
// Batches are derived from what the nodes record, not kept anywhere: a
// compartment's next batch starts when its previous batch is done (no node
// in progress), and its size follows from how many nodes are complete for
// the current change (with initialBatch b and delta d, complete nodes
// b + (b+d) + … tell how many batches are behind). A new change starts
// counting from zero, which is resetBatchStateOnCompletion's behaviour.
// batchThreshold, failureThreshold and safetyLimit are not applied yet: an
// erroring node keeps its batch open, which halts the compartment.
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

// Start is how many more nodes of a compartment may start now, given its
// node count and how many of them are complete and in progress.
func Start(b skyhookv1.DeploymentBudget, s *skyhookv1.DeploymentStrategy, nodes, complete, active int) int {
	if active > 0 {
		return 0 // the batch in flight must finish first
	}
	return min(capOf(b, nodes), batchSize(s, complete))
}

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

// batchSize is the size of the batch that follows complete finished nodes.
func batchSize(s *skyhookv1.DeploymentStrategy, complete int) int {
	initial, grow := 1, func(size int) int { return size }
	switch {
	case s == nil:
	case s.Fixed != nil:
		initial = value(s.Fixed.InitialBatch, 1)
	case s.Linear != nil:
		initial = value(s.Linear.InitialBatch, 1)
		delta := value(s.Linear.Delta, 1)
		grow = func(size int) int { return size + delta }
	case s.Exponential != nil:
		initial = value(s.Exponential.InitialBatch, 1)
		factor := value(s.Exponential.GrowthFactor, 2)
		grow = func(size int) int {
			if size > math.MaxInt32/factor {
				return math.MaxInt32
			}
			return size * factor
		}
	}
	size := initial
	for done := size; done <= complete; done += size {
		size = grow(size)
	}
	return size
}

func value(p *int32, fallback int) int {
	if p == nil || *p < 1 {
		return fallback
	}
	return int(*p)
}
