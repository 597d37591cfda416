package report

import (
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
