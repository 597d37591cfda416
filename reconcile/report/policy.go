package report

import (
	"github.com/fluxcd/pkg/runtime/conditions"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// PolicyOutcome is how a pass's DeploymentPolicy gate ended, for the
// status.
type PolicyOutcome struct {
	// Compartments is the batch state of each compartment, nil without a
	// policy.
	Compartments []skyhookv1.CompartmentStatus
	// Ceilings are the compartments' caps on nodes in progress, by name.
	Ceilings map[string]int
	// Halted describes the halted compartments; HaltedNow, for an event
	// each, the ones that halted in this pass.
	Halted, HaltedNow []string
	Policy            string
	// Stopped is true when a compartment halted and no other compartment
	// has a node running a stage: the rollout cannot finish until someone
	// changes the spec (retries of the halted compartment's failed nodes do
	// not lift a halt).
	Stopped bool
}

// Policy writes the compartments' batch state and the RolloutHalted
// condition. (An event for each compartment in HaltedNow is the
// reconciler's to record.)
func Policy(sk *skyhookv1.Skyhook, o PolicyOutcome) {
	sk.Status.Compartments = o.Compartments
	if len(o.Halted) == 0 {
		conditions.Delete(sk, skyhookv1.RolloutHaltedCondition)
		return
	}
	conditions.MarkTrue(sk, skyhookv1.RolloutHaltedCondition, "FailureThresholdReached",
		"no new nodes start in compartment %v: the failureThreshold of policy %s was reached; change the Skyhook's spec to resume", o.Halted, o.Policy)
}

// CompartmentStatuses is NodeWright's summary per compartment: from the
// policy's compartments, or for a Skyhook with a budget of capacity one
// __default__ compartment of all its nodes.
func CompartmentStatuses(o PolicyOutcome, p Progress, capacity int) map[string]skyhookv1.CompartmentProgress {
	if o.Compartments == nil {
		return map[string]skyhookv1.CompartmentProgress{skyhookv1.DefaultCompartmentName: progressOf(p.Selected, p.Complete, p.Active, capacity, nil)}
	}
	out := make(map[string]skyhookv1.CompartmentProgress, len(o.Compartments))
	for _, c := range o.Compartments {
		batch := &skyhookv1.BatchProgress{CurrentBatch: c.CurrentBatch(), LastBatchSize: int(c.BatchSize), CompletedNodes: int(c.Complete),
			FailedNodes: int(c.Erroring), ConsecutiveFailures: int(c.ConsecutiveFailures), LastBatchFailed: c.ConsecutiveFailures > 0, ShouldStop: c.Halted}
		out[c.Name] = progressOf(int(c.Nodes), int(c.Complete), int(c.InProgress), o.Ceilings[c.Name], batch)
	}
	return out
}

func progressOf(matched, completed, inProgress, ceiling int, batch *skyhookv1.BatchProgress) skyhookv1.CompartmentProgress {
	percent := 100
	if matched > 0 {
		percent = completed * 100 / matched
	}
	return skyhookv1.CompartmentProgress{Matched: matched, Ceiling: min(ceiling, matched), InProgress: inProgress, Completed: completed,
		ProgressPercent: percent, BatchState: batch}
}
