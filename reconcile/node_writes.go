package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// The operator's writes to nodes: a Skyhook's record (nodeState, config,
// batch and interrupt annotations, the status label), NodeWright's node
// conditions, the release of a cordon. Each goes through a fresh object,
// never the cached node, and is skipped when the node says it already; a
// record or its conditions also when this operator's last write says so
// (the cache can lag it).

// writeRecord writes the Skyhook's record on the node when it differs from
// what the node, and this operator's last write, say.
func (r *SkyhookReconciler) writeRecord(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, rec nodestate.Record) error {
	rec.Version = r.OperatorVersion
	patchData, err := nodestate.Patch(w.node, skyhookv1.RefOf(sk), rec)
	if err != nil || patchData == nil {
		return err
	}
	// The cached node may not show the last write yet; writing the same
	// record again would only cost a request.
	if r.memory.Written.Same(sk.UID, string(w.node.UID), patchData) {
		return nil
	}
	// A fresh object: Patch decodes the answer into it, and w.node is the
	// cache's own copy.
	target := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.node.Name}}
	if err := r.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patchData)); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.memory.Written.Record(sk.UID, string(w.node.UID), patchData)
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

// writeNodeConditions brings the node's conditions of the Skyhook up to
// date with its status and record. The cache can lag the write, so what
// was written last is remembered with the records (writtenRecords) and not
// written again.
func (r *SkyhookReconciler) writeNodeConditions(ctx context.Context, sk *skyhookv1.Skyhook, node *corev1.Node, status skyhookv1.Status, state skyhookv1.NodeState) error {
	want := report.NodeConditions(skyhookv1.RefOf(sk), status, state)
	patch, err := report.ConditionsPatch(node, want)
	if err != nil || patch == nil {
		return err
	}
	key, summary := string(node.UID)+"/conditions", []byte(report.ConditionSummary(want))
	if r.memory.Written.Same(sk.UID, key, summary) {
		return nil
	}
	if err := r.patchNodeStatus(ctx, node.Name, patch); err != nil {
		return err
	}
	r.memory.Written.Record(sk.UID, key, summary)
	return nil
}

// forgetNodeConditions removes the rollout's conditions from the node.
func (r *SkyhookReconciler) forgetNodeConditions(ctx context.Context, rollout skyhookv1.RolloutRef, node *corev1.Node) error {
	patch, err := report.ForgetConditionsPatch(node, rollout)
	if err != nil || patch == nil {
		return err
	}
	return r.patchNodeStatus(ctx, node.Name, patch)
}

// changeTaint sends a taint patch; a conflict (the node changed since the
// cache saw it) waits for the node event and the next pass.
func (r *SkyhookReconciler) changeTaint(ctx context.Context, node *corev1.Node, change func(*corev1.Node) ([]byte, error)) error {
	patch, err := change(node)
	if err != nil || patch == nil {
		return err
	}
	if err := r.patchNode(ctx, node.Name, patch); err != nil && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}
