package report

import (
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// reportFleetBudget sets the FleetBudgetHeld condition while waiting nodes
// are held back by a NodeDisruptionBudget.
func reportFleetBudget(sk *skyhookv1.Skyhook, held int, hold string) {
	if held == 0 {
		conditions.Delete(sk, skyhookv1.FleetBudgetHeldCondition)
		return
	}
	conditions.MarkTrue(sk, skyhookv1.FleetBudgetHeldCondition, "NodeDisruptionBudget", "%d nodes wait: %s", held, hold)
}

// reportYielded sets the WaitingForWorkloads condition while nodes have
// given their slot back to workloads that must not be interrupted.
func reportYielded(sk *skyhookv1.Skyhook, yielded int, since time.Time) {
	if yielded == 0 {
		conditions.Delete(sk, skyhookv1.WaitingForWorkloadsCondition)
		return
	}
	conditions.MarkTrue(sk, skyhookv1.WaitingForWorkloadsCondition, "NodesYielded",
		"%d nodes gave their slot back to workloads that must not be interrupted (podNonInterruptLabels or a PodDisruptionBudget), the longest waiting since %s; each is tried again when a slot is free",
		yielded, since.UTC().Format(time.RFC3339))
}
