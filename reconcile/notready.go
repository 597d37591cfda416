package reconcile

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// notReadySince reports whether the node is not Ready, and since when.
func notReadySince(node *corev1.Node) (bool, time.Time) {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue, c.LastTransitionTime.Time
		}
	}
	return true, node.CreationTimestamp.Time
}

// skipNotReady keeps a NotReady node from stalling the rollout: a node
// that has not started is not started; one in progress keeps its budget
// slot for NotReadyTimeout, then is skipped: its stage pods go (nothing
// then runs there unaccounted when it returns), its status says blocked and
// its slot goes to the next node. Back Ready, it resumes when the budget
// lets it. A node rebooting for an interrupt is the interrupt path's. It
// returns true when the node is skipped in this pass.
func (pass *rolloutPass) skipNotReady(w *nodeWork, pool *nodePool, p *report.Progress) bool {
	r, sk := pass.r, pass.sk
	down, since := notReadySince(w.node)
	if !down || nodeComplete(sk, w) {
		return false
	}
	if rebootUnderWay(interrupt.Read(w.node, pass.ref)) {
		return false
	}
	active := pass.nodeActive(w)
	if left := r.NotReadyTimeout - time.Since(since); active && left > 0 {
		p.RequeueIn(left)
		return false
	}
	message := "NotReady since " + stamp(since)
	if active {
		message += fmt.Sprintf("; skipped after %s, resumes when it is back", r.NotReadyTimeout)
		for _, pods := range w.pods {
			pool.deletePods(pods)
		}
		r.memory.Started.Remove(sk.UID, w.node.Name)
	}
	if w.node.Labels[pass.ref.StatusKey()] == string(skyhookv1.StatusInProgress) {
		pool.writeRecord(w, nodestate.Record{State: w.state, Config: w.config, Status: skyhookv1.StatusBlocked, Batch: w.batch,
			Interrupt: w.node.Annotations[pass.ref.InterruptAnnotation()]})
	}
	w.now = skyhookv1.StatusBlocked
	p.NodeBlocked(w.node.Name, message)
	return true
}

// rebootUnderWay reports whether the node's interrupt record is a reboot
// that may be under way: verified, or its pod started (a machine that
// goes down as it reboots never reports its pod's end). Such a node is the
// interrupt path's, with the reboot timeout: skipped as NotReady, its
// interrupt pod would go and the reboot be asked for again.
func rebootUnderWay(rec *interrupt.Record) bool {
	return rec != nil && (rec.Phase == interrupt.PhaseVerify ||
		rec.Phase == interrupt.PhaseInterrupt && rec.Interrupt.Type == skyhookv1.InterruptReboot)
}

// stamp is a moment as the status shows it.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ready is the node's Ready condition (Unknown when it has none).
func ready(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}
