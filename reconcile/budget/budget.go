// Package budget computes how many nodes a rollout may work on at once.
package budget

import skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"

// Cap is the most nodes of selected that may be in progress at once under
// an interruption budget: count as given; percent of the selected nodes
// rounded down but at least one; no budget means all of them. A budget of 0
// (count 0 or percent 0) stops new work.
func Cap(b skyhookv1.InterruptionBudget, selected int) int {
	switch {
	case b.Count != nil:
		return *b.Count
	case b.Percent != nil:
		if *b.Percent == 0 {
			return 0
		}
		return max(1, selected**b.Percent/100)
	default:
		return selected
	}
}
