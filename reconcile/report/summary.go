package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// OwnedConditions are the condition types the reconciler owns on an object
// of the kind: the status patch keeps its values of them over a stale read.
func OwnedConditions(kind skyhookv1.RolloutKind) []string {
	return append([]string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition,
		skyhookv1.NodesBlockedCondition, skyhookv1.RolloutHaltedCondition, skyhookv1.DrainBlockedCondition,
		skyhookv1.InterruptWindowClosedCondition, skyhookv1.FleetBudgetHeldCondition, skyhookv1.WaitingForWorkloadsCondition, skyhookv1.UninstallInProgressCondition, skyhookv1.UninstallFailedCondition,
		skyhookv1.BlockedCondition, skyhookv1.DeletionBlockedCondition}, upstreamConditionTypes(kind)...)
}

// Rollout is how the pass ran, beyond what it found: whether the Skyhook
// is paused, and after how many attempts a stage is given up.
type Rollout struct {
	Paused      bool
	MaxAttempts int32
}

// Summarise writes the status, the Flux conditions and NodeWright's.
func Summarise(sk *skyhookv1.Skyhook, p Progress, r Rollout) {
	summariseFlux(sk, p, r)
	mirrorReady(sk)
	mirrorNodeConditions(sk, p)
}

// summariseFlux writes the status and the Flux conditions; Ready's reason
// once complete is NodeWright's NodesConverged (Flux's tools read only its
// status), the others are Flux's.
func summariseFlux(sk *skyhookv1.Skyhook, p Progress, r Rollout) {
	s := &sk.Status
	s.CompleteNodes = fmt.Sprintf("%d/%d", p.Complete, p.Selected)
	s.NodesInProgress = p.Active
	s.PackageList = packageList(sk)
	s.NodesNeedingAttention = append(append(append([]skyhookv1.NodeAttention{}, p.Erroring...), p.Retrying...), p.Blocked...)
	reportBlocked(sk, p.Blocked)
	reportWindow(sk, p.WindowWaits, p.NextWindow)
	reportFleetBudget(sk, p.FleetHeld, p.FleetHold)
	reportYielded(sk, p.Yielded, p.YieldedSince)
	reportUninstalls(sk, p.Uninstalling, p.UninstallFailing)
	reportDependencies(sk)
	reportDrains(sk, p.DrainBlocked, p.Selected) // after the dependencies: their Blocked reason goes first
	s.NodesNeedingAttention = firstPerNode(s.NodesNeedingAttention)
	if len(s.NodesNeedingAttention) > skyhookv1.MaxAttentionNodes {
		s.NodesNeedingAttention = s.NodesNeedingAttention[:skyhookv1.MaxAttentionNodes]
	}
	switch {
	case p.Complete == p.Selected:
		s.Status = skyhookv1.StatusComplete
		s.ObservedGeneration = sk.Generation
		conditions.Delete(sk, meta.ReconcilingCondition)
		conditions.Delete(sk, meta.StalledCondition)
		conditions.MarkTrue(sk, meta.ReadyCondition, skyhookv1.NodesConvergedReason, "Applied to %d/%d nodes", p.Complete, p.Selected)
		return
	case p.Halted:
		// Nothing runs any more and the policy stopped new starts.
		markStalled(sk, "RolloutHalted", conditions.GetMessage(sk, skyhookv1.RolloutHaltedCondition))
		return
	case len(p.Stalled) > 0:
		markStalled(sk, "StageFailed", fmt.Sprintf("gave up after %d attempts: %v", r.MaxAttempts, p.Stalled))
		return
	case r.Paused:
		s.Status = skyhookv1.StatusPaused
	case p.HeldBy != "":
		s.Status = skyhookv1.StatusWaiting // as NodeWright says a Skyhook behind one with sequencing all
	case len(p.Erroring) > 0:
		s.Status = skyhookv1.StatusErroring
	case p.Active == 0 && p.BlockedNodes > 0 && p.BlockedNodes == p.Selected-p.Complete:
		s.Status = skyhookv1.StatusBlocked // every node left is blocked, as NodeWright says it
	default:
		s.Status = skyhookv1.StatusInProgress
	}
	conditions.Delete(sk, meta.StalledCondition)
	msg := fmt.Sprintf("%d/%d nodes complete, %d in progress%s%s", p.Complete, p.Selected, p.Active, p.behindSummary(), p.fleetSummary())
	conditions.MarkReconciling(sk, meta.ProgressingReason, "%s", msg)
	conditions.MarkFalse(sk, meta.ReadyCondition, meta.ProgressingReason, "%s", msg)
}

// MarkDisabled is the status of a Skyhook with the disable annotation.
func MarkDisabled(sk *skyhookv1.Skyhook) {
	sk.Status.Status = skyhookv1.StatusDisabled
	conditions.Delete(sk, meta.ReconcilingCondition)
	conditions.MarkFalse(sk, meta.ReadyCondition, "Disabled", "the %s annotation is set", skyhookv1.KindOf(sk).DisableAnnotation())
	mirrorReady(sk)
}

// markStalled is the status of a rollout that cannot go on by itself.
func markStalled(sk *skyhookv1.Skyhook, reason, message string) {
	sk.Status.Status = skyhookv1.StatusErroring
	sk.Status.ObservedGeneration = sk.Generation
	conditions.Delete(sk, meta.ReconcilingCondition)
	conditions.MarkStalled(sk, reason, "%s", message)
	conditions.MarkFalse(sk, meta.ReadyCondition, reason, "%s", message)
}

// reportBlocked sets the NodesBlocked condition naming the first ten
// blocked nodes and why.
func reportBlocked(sk *skyhookv1.Skyhook, blocked []skyhookv1.NodeAttention) {
	if len(blocked) == 0 {
		conditions.Delete(sk, skyhookv1.NodesBlockedCondition)
		return
	}
	names := make([]string, 0, min(len(blocked), 10))
	for _, b := range blocked[:min(len(blocked), 10)] {
		names = append(names, b.Name+" ("+b.Message+")")
	}
	more := ""
	if len(blocked) > 10 {
		more = fmt.Sprintf(" and %d more", len(blocked)-10)
	}
	conditions.MarkTrue(sk, skyhookv1.NodesBlockedCondition, "NodesBlocked", "%d nodes blocked: %s%s", len(blocked), strings.Join(names, "; "), more)
}

// firstPerNode keeps the first entry of each node: the list is a map keyed
// by node name, and a node with two failing packages must not appear twice.
func firstPerNode(list []skyhookv1.NodeAttention) []skyhookv1.NodeAttention {
	seen := map[string]bool{}
	out := list[:0]
	for _, a := range list {
		if !seen[a.Name] {
			seen[a.Name] = true
			out = append(out, a)
		}
	}
	return out
}

// packageList is "name:version" of every package, sorted, comma separated.
func packageList(sk *skyhookv1.Skyhook) string {
	items := make([]string, 0, len(sk.Spec.Packages))
	for name, p := range sk.Spec.Packages {
		items = append(items, name+":"+p.Version)
	}
	sort.Strings(items)
	return strings.Join(items, ",")
}

// NodeList names at most five nodes, and how many more there are.
func NodeList(names []string) string {
	if len(names) <= 5 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:5], ", "), len(names)-5)
}
