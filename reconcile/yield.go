package reconcile

import (
	"context"
	"slices"
	"time"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/drain"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// A node held by long-running workloads gives its slot back (drain.onTimeout
// Yield): a training job of weeks on one node must not hold a budget slot,
// of the rollout or of a NodeDisruptionBudget, the whole time while other
// nodes are free. The node's record says it yielded (PhaseYielded, with
// since when it waits); it counts as waiting, goes behind the rollout's
// other waiting nodes, and is tried again when a slot is free, at most
// every yieldRecheck. A try that finds the workloads still there yields at
// once; one that finds them gone, or saying they may be interrupted now
// (drain.Interruptible), drains the node and goes on.

// yieldRecheck is how long a node that yielded waits before it is tried
// again: the operator does not watch the pods of other namespaces, so a
// try is how it learns that the workloads ended.
const yieldRecheck = 30 * time.Second

// heldByWorkloads reports whether what holds the drain is workloads that
// must not be interrupted now: pods matching podNonInterruptLabels, or a
// PodDisruptionBudget.
func heldByWorkloads(blockers []drain.Blocker) bool {
	return slices.ContainsFunc(blockers, func(b drain.Blocker) bool {
		return b.Reason == drain.ReasonNonInterrupt || b.Reason == drain.ReasonPodDisruptionBudget
	})
}

// yield gives the node's slot back: its record says yielded, the pass
// forgets it started, and its cordon goes if the Skyhook asks.
func (n *nodePass) yield(ctx context.Context, rec *interrupt.Record) (bool, *interrupt.Record, error) {
	if rec.WaitingSince.IsZero() {
		rec.WaitingSince = rec.Since // the drain's start: the wait began there
	}
	rec.Phase, rec.Since, rec.Yields = interrupt.PhaseYielded, time.Now().UTC(), rec.Yields+1
	if n.drain != nil {
		n.drain.since = rec.WaitingSince
	}
	n.r.memory.Started.Remove(n.sk.UID, n.work.node.Name)
	if d := n.sk.Spec.Drain; d != nil && d.UncordonWhileYielded {
		return false, rec, n.r.releaseCordon(ctx, n.sk, n.work.node)
	}
	return false, rec, nil
}

// retryAfterYield turns a yielded record into a drain again, keeping since
// when the node waits; the drain yields again at once if the workloads
// still hold the node (Yields > 0).
func retryAfterYield(rec *interrupt.Record) *interrupt.Record {
	next := *rec
	next.Phase, next.Since = interrupt.PhaseDrain, time.Now().UTC()
	return &next
}

// yieldsNow reports whether a drain not done yields: past its timeout, or
// at once on a try after a yield, while workloads hold it.
func yieldsNow(rec *interrupt.Record, onTimeout skyhookv1.DrainOnTimeout, timedOut bool, blockers []drain.Blocker) bool {
	return onTimeout == skyhookv1.DrainYield && (timedOut || rec.Yields > 0) && heldByWorkloads(blockers)
}

// yieldedNode reports a node that gave its slot back in this generation:
// it waits (not advanced, holding no slot) and the status says since when.
func (pass *rolloutPass) yieldedNode(w *nodeWork, p *report.Progress) bool {
	rec := interrupt.Read(w.node, pass.ref)
	if !rec.Yielded(pass.sk.Generation) {
		return false
	}
	w.now = skyhookv1.StatusWaiting
	pass.r.memory.Started.Remove(pass.sk.UID, w.node.Name)
	p.NodeYielded(rec.WaitingSince)
	p.RequeueIn(yieldRecheck) // its next try, if a slot is free then
	return true
}

// retryDue reports whether a waiting node that yielded may be tried again
// now, and whether it yielded at all.
func (pass *rolloutPass) retryDue(w *nodeWork, now time.Time) (due, yielded bool) {
	rec := interrupt.Read(w.node, pass.ref)
	if !rec.Yielded(pass.sk.Generation) {
		return false, false
	}
	return now.Sub(rec.Since) >= yieldRecheck, true
}
