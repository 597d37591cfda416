package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Interrupts in the status: the drains that wait on pods, the nodes
// waiting for the interrupt window.

// Reasons a pod holds a drain (package drain's, repeated here so that
// report stands on api alone).
const (
	reasonPodDisruptionBudget = "PodDisruptionBudget"
	reasonUnmanagedPod        = "UnmanagedPod"
	reasonEmptyDirData        = "EmptyDirData"
	reasonNonInterrupt        = "NonInterruptPod"
	// NonInterruptPodsRunningReason is the Blocked condition's reason while
	// pods matching podNonInterruptLabels hold nodes (NodeWright v0.20).
	NonInterruptPodsRunningReason = "NonInterruptPodsRunning"
)

// listLimit caps the node names and detail lines a condition message
// lists, as NodeWright caps them.
const listLimit = 10

// reportDrains writes what holds the nodes' interrupts, in NodeWright
// v0.20's words: DrainBlocked for pods the drain may not or cannot remove
// (reason PodDisruptionBudget, UnmanagedPod, EmptyDirData or
// MultipleCauses), Blocked (NonInterruptPodsRunning) for pods matching
// podNonInterruptLabels; and lists those nodes among the ones needing
// attention. selected is the number of nodes the rollout selects.
func reportDrains(sk *skyhookv1.Skyhook, reports []DrainWait, selected int) {
	var drains, held []DrainWait
	for _, rep := range reports {
		sk.Status.NodesNeedingAttention = append(sk.Status.NodesNeedingAttention, skyhookv1.NodeAttention{
			Name: rep.Node, Status: skyhookv1.StatusBlocked, Message: "interrupt waits: " + waitSummary(rep)})
		if rep.has(reasonNonInterrupt) {
			held = append(held, rep)
		} else if len(rep.Blockers) > 0 {
			drains = append(drains, rep)
		}
	}
	reportDrainBlocked(sk, drains, selected)
	reportNonInterrupt(sk, held)
}

// waitSummary says what holds one node.
func waitSummary(rep DrainWait) string {
	if len(rep.Blockers) == 0 {
		return "removed pods still terminating"
	}
	pods := make([]string, len(rep.Blockers))
	for i, b := range rep.Blockers {
		pods[i] = b.Namespace + "/" + b.Name + " (" + b.Reason + ")"
	}
	return strings.Join(pods, ", ")
}

// reportDrainBlocked sets DrainBlocked as NodeWright words it: "N/total
// nodes blocked draining (nodes)", then a line per pod a budget refused
// with the API server's words, sorted so the message does not churn.
func reportDrainBlocked(sk *skyhookv1.Skyhook, drains []DrainWait, selected int) {
	if len(drains) == 0 {
		conditions.Delete(sk, skyhookv1.DrainBlockedCondition)
		return
	}
	sort.Slice(drains, func(i, j int) bool { return drains[i].Node < drains[j].Node })
	names := make([]string, len(drains))
	reasons := map[string]bool{}
	var details []string
	for i, d := range drains {
		names[i] = d.Node
		for _, b := range d.Blockers {
			reasons[b.Reason] = true
			if b.Detail != "" {
				details = append(details, fmt.Sprintf("%s/%s on %s: %s", b.Namespace, b.Name, d.Node, b.Detail))
			}
		}
	}
	sort.Strings(details)
	lines := append([]string{fmt.Sprintf("%d/%d nodes blocked draining%s", len(drains), selected, nodeList(names))}, capped(details)...)
	conditions.MarkTrue(sk, skyhookv1.DrainBlockedCondition, drainBlockedReason(reasons), "%s", strings.Join(lines, "; "))
}

// drainBlockedReason is the one kind of blocker seen, or MultipleCauses.
func drainBlockedReason(reasons map[string]bool) string {
	if len(reasons) == 1 {
		for r := range reasons {
			return r
		}
	}
	return "MultipleCauses"
}

// reportNonInterrupt sets Blocked (NonInterruptPodsRunning) while pods
// matching podNonInterruptLabels hold nodes; another Blocked reason (a
// dependency being uninstalled) goes first, and one of its own is cleared
// only by this.
func reportNonInterrupt(sk *skyhookv1.Skyhook, held []DrainWait) {
	current := conditions.Get(sk, skyhookv1.BlockedCondition)
	if current != nil && current.Status == "True" && current.Reason != NonInterruptPodsRunningReason {
		return
	}
	if len(held) == 0 {
		if current != nil && current.Reason == NonInterruptPodsRunningReason {
			conditions.Delete(sk, skyhookv1.BlockedCondition)
		}
		return
	}
	names := make([]string, len(held))
	for i, h := range held {
		names[i] = h.Node
	}
	sort.Strings(names)
	conditions.MarkTrue(sk, skyhookv1.BlockedCondition, NonInterruptPodsRunningReason,
		"%d node(s) blocked by non-interrupt pods%s. Waiting.", len(held), nodeList(names))
}

// nodeList is " (a, b)", or NodeWright's note when there are more than it
// lists.
func nodeList(names []string) string {
	if len(names) > listLimit {
		return " (list truncated; see controller logs)"
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// capped is at most listLimit lines, with NodeWright's note for the rest.
func capped(lines []string) []string {
	if len(lines) <= listLimit {
		return lines
	}
	return append(slices.Clone(lines[:listLimit]), "(additional detail truncated; see controller logs)")
}

// reportWindow sets the InterruptWindowClosed condition while nodes wait
// for the window, saying when it opens.
func reportWindow(sk *skyhookv1.Skyhook, waits int, next time.Time) {
	if waits == 0 {
		conditions.Delete(sk, skyhookv1.InterruptWindowClosedCondition)
		return
	}
	conditions.MarkTrue(sk, skyhookv1.InterruptWindowClosedCondition, "OutsideInterruptWindow",
		"%d nodes wait for the interrupt window of policy %s, which opens next at %s", waits, sk.Spec.DeploymentPolicy, next.UTC().Format(time.RFC3339))
}
