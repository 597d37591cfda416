// Package report decides what a Skyhook's status says from what a rollout
// pass found: the progress a pass tallies node by node, the summary status
// with Flux's conditions and NodeWright's, the per-node maps and
// compartment summaries NodeWright's readers use, the conditions a Skyhook
// keeps on each node, and the events a change of status announces. It
// decides; the reconciler reads the cluster and writes. Nothing here reads
// or writes the cluster, so its tests run without one.
package report

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Progress is what a pass found, for the status. Each node's turn reports
// into a Progress of its own, added to the pass's (Add).
type Progress struct {
	Selected, Complete, Active int
	// Ignored are the selected nodes labelled to be ignored.
	Ignored int
	// BlockedNodes are the selected nodes, not ignored, that are blocked.
	BlockedNodes int
	// Malformed are the selected nodes held because their record cannot
	// be read (also in Blocked).
	Malformed []skyhookv1.NodeAttention
	Blocked   []skyhookv1.NodeAttention
	Erroring  []skyhookv1.NodeAttention
	// Retrying are the nodes where a stage failed and is tried again: in
	// progress, and needing attention.
	Retrying []skyhookv1.NodeAttention
	// Stalled name the stages (package on node) that failed for good.
	Stalled []string
	// DrainBlocked are the nodes whose interrupt waits on pods.
	DrainBlocked []DrainWait
	// WindowWaits counts the nodes waiting for the interrupt window to
	// open at NextWindow.
	WindowWaits int
	NextWindow  time.Time
	// Halted: a compartment halted and nothing runs.
	Halted bool
	// Behind counts, per Skyhook that goes first, the nodes that wait for
	// it to finish there (priority).
	Behind map[string]int
	// Yielded counts the nodes that gave their slot back to workloads
	// (drain.onTimeout Yield), waiting since YieldedSince (the longest).
	Yielded      int
	YieldedSince time.Time
	// FleetHeld counts the waiting nodes a NodeDisruptionBudget held back
	// in the pass; FleetHold says why the first of them was.
	FleetHeld int
	FleetHold string
	// HeldBy is a Skyhook that goes first with sequencing all and is not
	// complete everywhere: it holds every node of this one.
	HeldBy string
	// Requeue is when the next pass is due at the latest, zero for no
	// need.
	Requeue time.Duration
	// Uninstalling and UninstallFailing count the nodes where a package is
	// in its uninstall (or uninstall interrupt), and where that fails.
	Uninstalling, UninstallFailing int
	// Untolerated names the nodes whose taints the Skyhook does not
	// tolerate.
	Untolerated []string
	// Applying says which package a stage pod was created for, and on
	// which node, in NodeWright's words (its ApplyPackage condition): the
	// first by node name.
	Applying, ApplyingNode string
}

// DrainWait says what holds a node's interrupt.
type DrainWait struct {
	Node     string
	Blockers []PodBlocker
}

// has reports whether a pod holds the node for the reason.
func (d DrainWait) has(reason string) bool {
	for _, b := range d.Blockers {
		if b.Reason == reason {
			return true
		}
	}
	return false
}

// PodBlocker is a pod a drain waits for, and why (drain.Blocker).
type PodBlocker struct {
	Namespace, Name, Reason, Detail string
}

// Applied notes a stage pod created for the package on the node.
func (p *Progress) Applied(pkg, version, node string) {
	p.NoteApplying(fmt.Sprintf("Applying package [%s:%s] to node [%s]", pkg, version, node), node)
}

// NoteApplying keeps the message of the first node by name.
func (p *Progress) NoteApplying(message, node string) {
	if node != "" && (p.ApplyingNode == "" || node < p.ApplyingNode) {
		p.Applying, p.ApplyingNode = message, node
	}
}

// RequeueIn asks for the next pass in d at the latest.
func (p *Progress) RequeueIn(d time.Duration) {
	if d > 0 && (p.Requeue <= 0 || d < p.Requeue) {
		p.Requeue = d
	}
}

func (p *Progress) NodeBlocked(node, message string) {
	p.Blocked = append(p.Blocked, skyhookv1.NodeAttention{Name: node, Status: skyhookv1.StatusBlocked, Message: message})
}

// NodeRetrying notes a node where a stage failed and is tried again.
func (p *Progress) NodeRetrying(node, message string) {
	p.Retrying = append(p.Retrying, skyhookv1.NodeAttention{Name: node, Status: skyhookv1.StatusInProgress, Message: message})
}

// NodeRebooting notes a node whose reboot the rollout waits for while it
// is down: in progress, needing attention, so that a machine that does not
// come back is named with since when before the reboot timeout ends.
func (p *Progress) NodeRebooting(node, message string) { p.NodeRetrying(node, message) }

func (p *Progress) NodeErroring(node, message string) {
	p.Erroring = append(p.Erroring, skyhookv1.NodeAttention{Name: node, Status: skyhookv1.StatusErroring, Message: message})
}

// GaveUp names a stage (package on node) that failed for good.
func (p *Progress) GaveUp(what string) { p.Stalled = append(p.Stalled, what) }

// DrainWaits records what holds a node's drain.
func (p *Progress) DrainWaits(node string, blockers []PodBlocker) {
	p.DrainBlocked = append(p.DrainBlocked, DrainWait{Node: node, Blockers: blockers})
}

// NodeFinished moves a node that was in progress to complete.
func (p *Progress) NodeFinished() {
	p.Active--
	p.Complete++
}

// WaitsForWindow counts a node whose interrupt waits for the window that
// opens at next.
func (p *Progress) WaitsForWindow(next, now time.Time) {
	p.WindowWaits++
	if p.NextWindow.IsZero() || next.Before(p.NextWindow) {
		p.NextWindow = next
	}
	p.RequeueIn(next.Sub(now))
}

// WaitForFleetBudget counts a waiting node a NodeDisruptionBudget holds
// back, hold saying why.
func (p *Progress) WaitForFleetBudget(hold string) {
	if p.FleetHeld == 0 {
		p.FleetHold = hold
	}
	p.FleetHeld++
}

// fleetSummary says how many nodes wait for a NodeDisruptionBudget.
func (p *Progress) fleetSummary() string {
	if p.FleetHeld == 0 {
		return ""
	}
	return fmt.Sprintf(", %d waiting for a NodeDisruptionBudget", p.FleetHeld)
}

// NodeYielded counts a node that gave its slot back to workloads, waiting
// for them since since.
func (p *Progress) NodeYielded(since time.Time) {
	p.Yielded++
	if p.YieldedSince.IsZero() || since.Before(p.YieldedSince) {
		p.YieldedSince = since
	}
}

// WaitBehind counts a node waiting for the Skyhook first to finish there.
func (p *Progress) WaitBehind(first string) {
	if p.Behind == nil {
		p.Behind = map[string]int{}
	}
	p.Behind[first]++
}

// Add adds what one node's turn reported.
func (p *Progress) Add(local Progress) {
	p.Active += local.Active
	p.Complete += local.Complete
	p.RequeueIn(local.Requeue)
	p.NoteApplying(local.Applying, local.ApplyingNode)
	p.AddLists(local)
}

// AddLists adds what a node has for the status's lists and conditions.
func (p *Progress) AddLists(local Progress) {
	p.Malformed = append(p.Malformed, local.Malformed...)
	p.Erroring = append(p.Erroring, local.Erroring...)
	p.Retrying = append(p.Retrying, local.Retrying...)
	p.Stalled = append(p.Stalled, local.Stalled...)
	p.Blocked = append(p.Blocked, local.Blocked...)
	p.DrainBlocked = append(p.DrainBlocked, local.DrainBlocked...)
	p.Untolerated = append(p.Untolerated, local.Untolerated...)
	p.WindowWaits += local.WindowWaits
	if local.Yielded > 0 {
		p.Yielded += local.Yielded - 1
		p.NodeYielded(local.YieldedSince)
	}
	p.Uninstalling += local.Uninstalling
	p.UninstallFailing += local.UninstallFailing
	if !local.NextWindow.IsZero() && (p.NextWindow.IsZero() || local.NextWindow.Before(p.NextWindow)) {
		p.NextWindow = local.NextWindow
	}
}

// Noteworthy reports whether a node's report has anything for the lists
// (see AddLists).
func (p *Progress) Noteworthy() bool {
	return len(p.Malformed)+len(p.Erroring)+len(p.Retrying)+len(p.Stalled)+len(p.Blocked)+len(p.DrainBlocked)+len(p.Untolerated)+
		p.WindowWaits+p.Yielded+p.Uninstalling+p.UninstallFailing > 0
}

// SortByNode puts the lists in a stable order: the status must not change
// with the order the nodes finished in.
func (p *Progress) SortByNode() {
	sort.SliceStable(p.Erroring, func(i, j int) bool { return p.Erroring[i].Name < p.Erroring[j].Name })
	sort.SliceStable(p.Retrying, func(i, j int) bool { return p.Retrying[i].Name < p.Retrying[j].Name })
	sort.Strings(p.Stalled)
	sort.SliceStable(p.Blocked, func(i, j int) bool { return p.Blocked[i].Name < p.Blocked[j].Name })
	sort.Slice(p.DrainBlocked, func(i, j int) bool { return p.DrainBlocked[i].Node < p.DrainBlocked[j].Node })
}

// behindSummary says which Skyhooks hold nodes back, so a rollout that
// does not move because another Skyhook is erroring says why.
func (p *Progress) behindSummary() string {
	if len(p.Behind) == 0 {
		return ""
	}
	var n int
	var names []string
	for _, name := range slices.Sorted(maps.Keys(p.Behind)) {
		n += p.Behind[name]
		names = append(names, fmt.Sprintf("%s (%d)", name, p.Behind[name]))
	}
	return fmt.Sprintf(", %d waiting for Skyhooks that go first there: %s", n, strings.Join(names, ", "))
}
