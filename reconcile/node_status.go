package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// The status_<skyhook> label and annotation of the nodes no stage runs on
// in a pass, as NodeWright marks them: a disabled or paused Skyhook's
// nodes read disabled or paused; a node held behind another Skyhook reads
// waiting, one with taints the Skyhook does not tolerate blocked; a
// complete node complete again once such a mark no longer holds. (A node
// running a stage gets its status with its record, writeRecord.) A node
// that only waits for the budget keeps whatever it has, so a new rollout
// does not cost a write per node before it starts.

// statusMarksPerPass bounds the marks one pass writes, so that marking
// thousands of nodes does not hold up the pass that starts them; each mark
// is a node event that brings the next pass.
const statusMarksPerPass = 50

// markStatus writes the status marks the nodes need (fleetView keeps
// which), at most statusMarksPerPass, in name order.
func (pass *rolloutPass) markStatus(ctx context.Context, view *fleetView, pool *nodePool) error {
	var due []*nodeWork
	view.Index.NeedingMarks(func(name string) bool {
		due = append(due, view.Works[name])
		return len(due) < statusMarksPerPass
	})
	for _, w := range due {
		found, err := pass.refresh(ctx, w)
		if err != nil {
			return err
		}
		// A node cached from before this operator's last record write
		// may lack a mark that write carried: its event brings it back.
		if want, ok := pass.markWanted(w); ok && found && !pass.r.memory.NodeVersions.Behind(pass.sk.UID, w.node) {
			pool.markNode(w, want)
		}
		view.marked(w.node.Name)
	}
	return nil
}

// markWanted is the status mark a node that is complete, waiting or
// blocked in this pass should carry, and whether it lacks it.
func (pass *rolloutPass) markWanted(w *nodeWork) (skyhookv1.Status, bool) {
	if w.now != skyhookv1.StatusComplete && w.now != skyhookv1.StatusWaiting && w.now != skyhookv1.StatusBlocked {
		return "", false
	}
	key := pass.ref.StatusKey()
	want, has := w.now, skyhookv1.Status(w.node.Labels[key])
	switch {
	case pass.paused:
		want = skyhookv1.StatusPaused
	case w.mark != "":
		want = w.mark
	case w.now == skyhookv1.StatusWaiting && has == "":
		return "", false // waits for the budget; its first stage marks it
	}
	return want, has != want || skyhookv1.Status(w.node.Annotations[key]) != want
}

// markNode writes a status mark in the pool.
func (n *nodePool) markNode(w *nodeWork, status skyhookv1.Status) {
	n.group.Go(func() error { return n.pass.r.writeMark(n.ctx, n.pass.sk, w, status) })
}

// writeMark writes the node's status mark. Unlike a record, a mark is not
// checked against this operator's last write: someone else (the CLI's
// reset) may have removed it since, and the pass that follows a mark's own
// node event already sees it in the cache.
func (r *SkyhookReconciler) writeMark(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, status skyhookv1.Status) error {
	patch := nodestate.StatusPatch(w.node, skyhookv1.RefOf(sk), status)
	if patch == nil {
		return nil
	}
	return r.patchNode(ctx, w.node.Name, patch)
}

// markDisabledNodes marks the selected nodes of a disabled Skyhook
// disabled, a bounded number per pass (see markStatus); their records stay
// as they are. The metrics count them.
func (r *SkyhookReconciler) markDisabledNodes(ctx context.Context, sk *skyhookv1.Skyhook) (ctrl.Result, error) {
	sel, err := metav1.LabelSelectorAsSelector(&sk.Spec.NodeSelector)
	if err != nil {
		return ctrl.Result{}, nil // admission refuses such selectors: it selects nothing
	}
	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	observeDisabled(sk, len(nodes.Items))
	pass := &rolloutPass{r: r, sk: sk}
	pool := pass.pool(ctx)
	work := make([]*nodeWork, len(nodes.Items))
	for i := range nodes.Items {
		work[i] = &nodeWork{node: &nodes.Items[i], now: skyhookv1.StatusComplete, mark: skyhookv1.StatusDisabled}
	}
	marked := 0
	for _, w := range work {
		if want, ok := pass.markWanted(w); ok && marked < statusMarksPerPass {
			pool.markNode(w, want)
			marked++
		}
	}
	return ctrl.Result{}, pool.wait()
}
