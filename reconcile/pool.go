package reconcile

import (
	"context"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"

	"github.com/skyhook-go/skyhook/api/nodestate"
)

// The pool that sends the writes of a pass (stage pod deletes, node
// records, cordons, taints) for several nodes at once.

// nodePool runs the API requests of a pass for several nodes at once. The
// decisions (which node is active, which may start) are made one node
// after another; the requests they lead to (create and delete stage pods,
// write node records) are independent per node, and at fleet scale a pass
// that sends them one by one spends its time waiting on the API server.
type nodePool struct {
	pass  *rolloutPass
	group *errgroup.Group
	ctx   context.Context
}

// pool starts a pool.
func (pass *rolloutPass) pool(ctx context.Context) *nodePool {
	group, ctx := errgroup.WithContext(ctx)
	group.SetLimit(max(1, pass.r.Parallelism))
	return &nodePool{pass: pass, group: group, ctx: ctx}
}

// advance runs the node's turn (nodePass.advance) in the pool. What the
// turn reports joins the node's report; only this turn touches the node.
func (n *nodePool) advance(w *nodeWork, start bool) {
	n.group.Go(func() error {
		turn := n.pass.nodePass(w, start)
		err := turn.advance(n.ctx)
		w.report.Add(*turn.progress)
		return err
	})
}

// deletePods deletes finished stage pods in the pool.
func (n *nodePool) deletePods(pods []*corev1.Pod) {
	for _, pod := range pods {
		n.group.Go(func() error { return n.pass.r.deletePod(n.ctx, n.pass.sk, pod) })
	}
}

// retirePods keeps or deletes stage pods whose stage is done in the pool
// (SkyhookReconciler.retire).
func (n *nodePool) retirePods(pods []*corev1.Pod) {
	for _, pod := range pods {
		n.group.Go(func() error { return n.pass.r.retire(n.ctx, n.pass.sk, pod) })
	}
}

// releaseCordon lifts the Skyhook's cordon of the node in the pool.
func (n *nodePool) releaseCordon(node *corev1.Node) {
	n.group.Go(func() error { return n.pass.r.releaseCordon(n.ctx, n.pass.sk, node) })
}

// changeTaints adds or removes the runtime-required taint in the pool.
func (n *nodePool) changeTaints(node *corev1.Node, change func(*corev1.Node) ([]byte, error)) {
	n.group.Go(func() error { return n.pass.r.changeTaint(n.ctx, node, change) })
}

// writeRecord writes a node record in the pool.
func (n *nodePool) writeRecord(w *nodeWork, rec nodestate.Record) {
	n.group.Go(func() error { return n.pass.r.writeRecord(n.ctx, n.pass.sk, w, rec) })
}

// patchNode sends a merge patch of the node in the pool.
func (n *nodePool) patchNode(name string, patch []byte) {
	n.group.Go(func() error { return n.pass.r.patchNode(n.ctx, name, patch) })
}

// wait waits for every request.
func (n *nodePool) wait() error {
	return n.group.Wait()
}
