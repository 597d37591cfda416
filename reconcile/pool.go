package reconcile

import (
	"context"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/api/nodestate"
)

// The writes of a pass (stage pod deletes, node records, cordons, taints)
// and the pool that sends them for several nodes at once.

// defaultParallelism is how many nodes a pass works on at once when the
// reconciler does not say.
const defaultParallelism = 16

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
		w.report.add(*turn.progress)
		return err
	})
}

// deletePods deletes finished stage pods in the pool.
func (n *nodePool) deletePods(pods []*corev1.Pod) {
	for _, pod := range pods {
		n.group.Go(func() error { return n.pass.r.deletePod(n.ctx, pod) })
	}
}

// releaseCordon lifts the Skyhook's cordon of the node in the pool.
func (n *nodePool) releaseCordon(node *corev1.Node) {
	n.group.Go(func() error { return n.pass.r.releaseCordon(n.ctx, n.pass.sk, node) })
}

// changeTaints adds or removes the runtime-required taint in the pool.
func (n *nodePool) changeTaints(node *corev1.Node, change func(*corev1.Node, corev1.Taint) ([]byte, error)) {
	n.group.Go(func() error { return n.pass.r.changeTaint(n.ctx, node, change) })
}

// writeRecord writes a node record in the pool.
func (n *nodePool) writeRecord(w *nodeWork, rec nodestate.Record) {
	n.group.Go(func() error { return n.pass.r.writeRecord(n.ctx, n.pass.sk, w, rec) })
}

// wait waits for every request.
func (n *nodePool) wait() error {
	return n.group.Wait()
}

// writeRecord writes the Skyhook's record on the node when it differs from
// what the node, and this operator's last write, say.
func (r *SkyhookReconciler) writeRecord(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, rec nodestate.Record) error {
	rec.Version = r.OperatorVersion
	patchData, err := nodestate.Patch(w.node, sk.Name, rec)
	if err != nil || patchData == nil {
		return err
	}
	// The cached node may not show the last write yet; writing the same
	// record again would only cost a request.
	if r.written.same(sk.UID, string(w.node.UID), patchData) {
		return nil
	}
	// A fresh object: Patch decodes the answer into it, and w.node is the
	// cache's own copy.
	target := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.node.Name}}
	if err := r.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patchData)); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.written.record(sk.UID, string(w.node.UID), patchData)
	return nil
}

// releaseCordon lifts the node's cordon when the Skyhook placed it.
func (r *SkyhookReconciler) releaseCordon(ctx context.Context, sk *skyhookv1.Skyhook, node *corev1.Node) error {
	patch, err := cordon.Release(node, sk)
	if err != nil || patch == nil {
		return err
	}
	return r.patchNode(ctx, node.Name, patch)
}

// patchNode sends a merge patch through a fresh object (the cached node
// must not be written into).
func (r *SkyhookReconciler) patchNode(ctx context.Context, name string, patch []byte) error {
	target := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return client.IgnoreNotFound(r.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)))
}

// patchNodeStatus sends a strategic merge patch of the node's status (its
// conditions merge by type) through a fresh object.
func (r *SkyhookReconciler) patchNodeStatus(ctx context.Context, name string, patch []byte) error {
	target := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return client.IgnoreNotFound(r.Client.Status().Patch(ctx, target, client.RawPatch(types.StrategicMergePatchType, patch)))
}
