package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/taints"
)

// Re-applying after a reboot (--reapply-on-reboot, NodeWright's
// REAPPLY_ON_REBOOT): on hosts whose changes do not outlive a boot, a node
// that rebooted has lost what the packages did, so its record is reset and
// the rollout starts over there. A reboot is a boot ID other than the one
// the rollout last acknowledged on the node (its bootID_ annotation, else
// NodeWright's status.nodeBootIds, for a rollout taken over from it). The
// rollout's own reboot interrupt is not one: while it runs the interrupt_
// annotation is on the node, and the write that records it done
// acknowledges the new boot (advance).

// bootToAcknowledge is the node's boot ID for its record write, empty when
// reboots are not tracked.
func (r *SkyhookReconciler) bootToAcknowledge(node *corev1.Node) string {
	if !r.ReapplyOnReboot {
		return ""
	}
	return node.Status.NodeInfo.BootID
}

// rebootVerdict is what a node's boot ID says to the rollout.
type rebootVerdict int

const (
	bootAcknowledged rebootVerdict = iota // nothing to do
	bootUnknown                           // a record without an acknowledged boot: acknowledge this one
	bootRebooted                          // rebooted since: start over
)

// judgeBoot compares the node's boot ID with the one the rollout
// acknowledged. Only nodes with a record and no interrupt of the rollout's
// under way are judged.
func judgeBoot(node *corev1.Node, ref skyhookv1.RolloutRef, statusBootIDs map[string]string) rebootVerdict {
	current := node.Status.NodeInfo.BootID
	_, hasRecord := node.Annotations[ref.NodeStateAnnotation()]
	_, interrupting := node.Annotations[ref.InterruptAnnotation()]
	if current == "" || !hasRecord || interrupting {
		return bootAcknowledged
	}
	last, ok := node.Annotations[ref.BootIDAnnotation()]
	if !ok {
		last = statusBootIDs[node.Name]
		if last == "" || last == current {
			return bootUnknown
		}
	}
	if last != current {
		return bootRebooted
	}
	return bootAcknowledged
}

// reapplyRebooted resets the record of every node that rebooted, and
// acknowledges the boot of nodes whose record has none yet. It reports
// whether it reset a node: that pass then ends (as after an auto-taint),
// and the next one sees the node as new.
func (pass *rolloutPass) reapplyRebooted(ctx context.Context, work []*nodeWork) (bool, error) {
	if !pass.r.ReapplyOnReboot {
		return false, nil
	}
	reset := false
	// Every node of a rollout that predates the flag is acknowledged in
	// the first pass: one write per node, sent several at once.
	pool := pass.pool(ctx)
	for _, w := range work {
		switch judgeBoot(w.node, pass.ref, pass.sk.Status.NodeBootIDs) {
		case bootUnknown:
			if patch := nodestate.AcknowledgeBoot(w.node, pass.ref, w.node.Status.NodeInfo.BootID); patch != nil {
				pool.patchNode(w.node.Name, patch)
			}
		case bootRebooted:
			done, err := pass.resetRebooted(ctx, w.node)
			if err != nil {
				_ = pool.wait()
				return reset, err
			}
			reset = reset || done
		}
	}
	return reset, pool.wait()
}

// resetRebooted starts the rollout over on a node that rebooted. A
// runtimeRequired rollout with autoTaintNewNodes taints the node first, as
// NodeWright v0.17 does, so that no workload lands on it before the
// packages are back; the reset waits for that write. It reports whether
// the node was reset (false: the taint write met a newer node; the next
// pass tries again).
func (pass *rolloutPass) resetRebooted(ctx context.Context, node *corev1.Node) (bool, error) {
	r, sk := pass.r, pass.sk
	boot := node.Status.NodeInfo.BootID
	patch := nodestate.RebootReset(pass.ref, boot)
	// The cache may show the node as it was before this write: the same
	// reset (same boot ID) is not sent, nor announced, twice.
	key := string(node.UID) + "/reboot"
	if r.memory.Written.Same(sk.UID, key, patch) {
		return true, nil
	}
	if sk.Spec.RuntimeRequired && sk.Spec.AutoTaintNewNodes && !taints.HasAny(node, r.runtimeTaints()) {
		taint, err := taints.AddToNew(pass.ref.Kind)(node, r.runtimeTaintOf(pass.ref.Kind))
		if err != nil {
			return false, err
		}
		if err := r.patchNode(ctx, node.Name, taint); apierrors.IsConflict(err) {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
	if err := r.patchNode(ctx, node.Name, patch); err != nil {
		return false, err
	}
	r.memory.Written.Record(sk.UID, key, patch)
	// NodeWright's reason and words, which alerts may match.
	r.Recorder.Eventf(sk, node, corev1.EventTypeNormal, "Reboot", "ReapplyAfterReboot", "detected reboot, resetting node [%s] to be reapplied", node.Name)
	r.Recorder.Eventf(node, sk, corev1.EventTypeNormal, "Reboot", "ReapplyAfterReboot", "detected reboot, resetting node for [%s] to be reapplied", sk.Name)
	return true, nil
}
