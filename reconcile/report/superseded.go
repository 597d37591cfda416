package report

import (
	"slices"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// SupersededReason is the reason of the Ready, Reconciling and Stalled
// conditions of a rollout object whose twin rolls its packages out.
const SupersededReason = "Superseded"

// Superseded writes the status of a rollout object whose twin (the object
// of the same name under the other kind) rolls its packages out: the
// twin's summary, and its Ready, Reconciling and Stalled conditions with
// the twin named, so that kstatus, Flux's health checks and kubectl wait
// read either object as the one rollout they are. Its per-node maps and
// other conditions would be stale copies, so they go; the twin's status
// has them.
func Superseded(sk, leader *skyhookv1.Skyhook) {
	s, from := &sk.Status, leader.Status
	s.Status, s.CompleteNodes, s.NodesInProgress, s.PackageList = from.Status, from.CompleteNodes, from.NodesInProgress, from.PackageList
	s.NodesNeedingAttention, s.Compartments, s.CompartmentStatuses = nil, nil, nil
	s.NodeState, s.NodeStatus, s.NodeBootIDs, s.NodePriority, s.OmittedNodes = nil, nil, nil, nil, nil
	mirrored := []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}
	for _, t := range OwnedConditions(skyhookv1.KindOf(sk)) {
		if !slices.Contains(mirrored, t) {
			conditions.Delete(sk, t)
		}
	}
	twin := skyhookv1.RefOf(leader).String()
	for _, t := range mirrored {
		c := conditions.Get(leader, t)
		if c == nil {
			conditions.Delete(sk, t)
			continue
		}
		set(sk, t, c.Status, SupersededReason, "rolled out as "+twin+": "+c.Message)
	}
	if from.ObservedGeneration == leader.Generation {
		s.ObservedGeneration = sk.Generation // the twin's view is current, and so is this one's
	}
}
