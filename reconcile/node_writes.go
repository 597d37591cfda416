package reconcile

import (
	"context"
	"encoding/json"

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
// (the cache can lag it). A pass writes a node's record and conditions in
// one request (writeRecordAndConditions).

// writeRecord writes the Skyhook's record on the node when it differs from
// what the node, and this operator's last write, say.
func (r *SkyhookReconciler) writeRecord(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, rec nodestate.Record) error {
	return r.writeRecordAndConditions(ctx, sk, w, rec, nil)
}

// writeRecordAndConditions writes the Skyhook's record on the node and,
// unless conditions is nil, the node conditions for the status
// (report.NodeConditions), each when it differs from what the node and this
// operator's last write say, in one request: a node's status subresource
// takes its labels and annotations too (the apiserver's node status
// strategy keeps only the spec), so the record rides on the conditions'
// patch when both change, as they do when a node starts and completes.
func (r *SkyhookReconciler) writeRecordAndConditions(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, rec nodestate.Record, conditions []corev1.NodeCondition) error {
	record, err := r.recordPatch(sk, w, rec)
	if err != nil {
		return err
	}
	standing, summary, err := r.conditionsPatch(sk, w.node, conditions)
	if err != nil {
		return err
	}
	// A fresh object: Patch decodes the answer into it, and w.node is the
	// cache's own copy.
	target := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.node.Name}}
	switch {
	case standing != nil:
		both, err := withRecord(standing, record)
		if err != nil {
			return err
		}
		err = r.Client.Status().Patch(ctx, target, client.RawPatch(types.StrategicMergePatchType, both))
		if err != nil {
			return client.IgnoreNotFound(err)
		}
	case record != nil:
		if err := r.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, record)); err != nil {
			return client.IgnoreNotFound(err)
		}
	default:
		return nil
	}
	if record != nil {
		r.memory.Written.Record(sk.UID, string(w.node.UID), record)
		r.memory.NodeVersions.Record(sk.UID, w.node.UID, target.ResourceVersion)
	}
	if standing != nil {
		r.memory.Written.Record(sk.UID, conditionsKey(w.node), summary)
	}
	return nil
}

// recordPatch is the merge patch of the node's metadata that writes the
// record (nil when the node, or this operator's last write, says it
// already: the cached node may not show the last write yet, and writing
// the same record again would only cost a request).
func (r *SkyhookReconciler) recordPatch(sk *skyhookv1.Skyhook, w *nodeWork, rec nodestate.Record) ([]byte, error) {
	rec.Version = r.OperatorVersion
	patch, err := nodestate.Patch(w.node, skyhookv1.RefOf(sk), rec)
	if err != nil || patch == nil || r.memory.Written.Same(sk.UID, string(w.node.UID), patch) {
		return nil, err
	}
	return patch, nil
}

// conditionsPatch is the strategic merge patch of the node's status that
// writes the conditions that changed (nil when none did, or when this
// operator's last write says so), with their summary to remember.
func (r *SkyhookReconciler) conditionsPatch(sk *skyhookv1.Skyhook, node *corev1.Node, want []corev1.NodeCondition) ([]byte, []byte, error) {
	if want == nil {
		return nil, nil, nil
	}
	patch, err := report.ConditionsPatch(node, want)
	summary := []byte(report.ConditionSummary(want))
	if err != nil || patch == nil || r.memory.Written.Same(sk.UID, conditionsKey(node), summary) {
		return nil, nil, err
	}
	return patch, summary, nil
}

func conditionsKey(node *corev1.Node) string { return string(node.UID) + "/conditions" }

// withRecord adds the record's metadata patch to the conditions' status
// patch. A merge patch of labels and annotations means the same as a
// strategic one (plain maps; null removes a key).
func withRecord(conditions, record []byte) ([]byte, error) {
	if record == nil {
		return conditions, nil
	}
	var both, meta map[string]json.RawMessage
	if err := json.Unmarshal(conditions, &both); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(record, &meta); err != nil {
		return nil, err
	}
	both["metadata"] = meta["metadata"]
	return json.Marshal(both)
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
