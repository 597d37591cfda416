package reconcile

import (
	"context"
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/taints"
)

// The runtime-required taint (SkyhookReconciler.RuntimeRequiredTaint, or
// each kind's own) keeps workloads off a node until every runtimeRequired
// rollout that selects it is complete there. Stage pods of every Skyhook tolerate it
// (stagepod.Tolerations), so a Skyhook of a lower priority number that is
// not runtimeRequired still runs first on the node and cannot deadlock the
// runtimeRequired ones.

// runtimeRequired lists the rollouts of every kind that are
// runtimeRequired and still count (not disabled, not being deleted), with
// their selectors parsed.
func (r *SkyhookReconciler) runtimeRequired(ctx context.Context) ([]skyhookAhead, error) {
	return r.otherSkyhooks(ctx, func(sk *skyhookv1.Skyhook) bool { return sk.Spec.RuntimeRequired })
}

// runtimeTaintDone reports whether every runtimeRequired rollout that
// selects the node is complete on it (except one being deleted, leaving).
func runtimeTaintDone(required []skyhookAhead, node *corev1.Node, leaving skyhookv1.RolloutRef) bool {
	for _, rr := range required {
		if rr.ref == leaving || !rr.selector.Matches(labels.Set(node.Labels)) {
			continue
		}
		if node.Labels[rr.ref.StatusKey()] != string(skyhookv1.StatusComplete) {
			return false
		}
	}
	return true
}

// autoTaint puts the runtime-required taint on the rollout's new nodes when
// it is runtimeRequired with autoTaintNewNodes, as NodeWright's
// HandleAutoTaint does: a node is new while it carries no annotation under
// the kind's prefix (no rollout of the kind has touched it: the nodes of a
// cluster on day 0 as well as one that joins later) and lacks the taint.
// It reports whether it tainted a node; that pass then does nothing else
// (NodeWright's returns too), so that the status marks the rest of the pass
// writes cannot make a node look touched before its taint is on. The
// node's update starts the next pass.
func (pass *rolloutPass) autoTaint(ctx context.Context, work []*nodeWork) (bool, error) {
	r, sk := pass.r, pass.sk
	if !sk.Spec.RuntimeRequired || !sk.Spec.AutoTaintNewNodes {
		return false, nil
	}
	pool := pass.pool(ctx)
	tainted := false
	taint := r.runtimeTaintOf(pass.ref.Kind)
	for _, w := range work {
		// A node with any kind's runtime-required taint is gated already.
		if !untouched(w.node, pass.ref.Kind) || taints.HasAny(w.node, r.runtimeTaints()) {
			continue
		}
		pool.changeTaints(w.node, func(node *corev1.Node) ([]byte, error) { return taints.AddToNew(pass.ref.Kind)(node, taint) })
		tainted = true
	}
	return tainted, pool.wait()
}

// untouched reports whether the node carries no annotation under the
// kind's prefix (skyhook.nvidia.com/, nodewright.nvidia.com/).
func untouched(node *corev1.Node, kind skyhookv1.RolloutKind) bool {
	for k := range node.Annotations {
		if strings.HasPrefix(k, kind.Prefix+"/") {
			return false
		}
	}
	return true
}

// runtimeTaints takes the runtime-required taints (every kind's) off the
// rollout's complete nodes where every runtimeRequired rollout is
// complete; where one of those asks for runtimeRequiredCordonAfter, the
// same write cordons the node. It also drops the mark of such a cordon an
// admin lifted without it.
func (pass *rolloutPass) runtimeTaints(ctx context.Context, work []*nodeWork, pool *nodePool) error {
	r, sk := pass.r, pass.sk
	if !sk.Spec.RuntimeRequired {
		return nil
	}
	var required []skyhookAhead
	for _, w := range work {
		pass.dropStaleRuntimeCordon(w.node, pool)
		if w.now != skyhookv1.StatusComplete || !taints.HasAny(w.node, r.runtimeTaints()) {
			continue
		}
		if required == nil {
			var err error
			if required, err = r.runtimeRequired(ctx); err != nil {
				return err
			}
		}
		// This rollout's own label may lag its completion in this pass.
		done := nodeWithStatus(w.node, pass.ref, skyhookv1.StatusComplete)
		if !runtimeTaintDone(required, done, skyhookv1.RolloutRef{}) {
			continue
		}
		if kind, ok := cordonAfter(required, done); ok {
			pool.changeTaints(w.node, func(node *corev1.Node) ([]byte, error) {
				return taints.RemoveAndCordon(node, kind.RuntimeRequiredCordonAnnotation(), r.runtimeTaints()...)
			})
			continue
		}
		pool.changeTaints(w.node, r.removeRuntimeTaints)
	}
	return nil
}

// removeRuntimeTaints is the patch that takes every recognised
// runtime-required taint off the node.
func (r *SkyhookReconciler) removeRuntimeTaints(node *corev1.Node) ([]byte, error) {
	return taints.Remove(node, r.runtimeTaints()...)
}

// cordonAfter is the kind of a runtimeRequired rollout selecting the node
// that asks for runtimeRequiredCordonAfter (NodeWright v0.19), if one does.
func cordonAfter(required []skyhookAhead, node *corev1.Node) (skyhookv1.RolloutKind, bool) {
	for _, rr := range required {
		if rr.cordonAfter && rr.selector.Matches(labels.Set(node.Labels)) {
			return rr.ref.Kind, true
		}
	}
	return skyhookv1.RolloutKind{}, false
}

// dropStaleRuntimeCordon removes the rollout kind's runtimeRequiredCordon
// mark from a node an admin uncordoned without removing it, as NodeWright
// does: the mark would otherwise keep the next interrupt's cordon.
func (pass *rolloutPass) dropStaleRuntimeCordon(node *corev1.Node, pool *nodePool) {
	mark := pass.ref.Kind.RuntimeRequiredCordonAnnotation()
	if _, ok := node.Annotations[mark]; !ok || node.Spec.Unschedulable {
		return
	}
	pool.changeTaints(node, func(*corev1.Node) ([]byte, error) {
		return json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{mark: nil}}})
	})
}

// nodeWithStatus is the node as it reads once its status label for the
// rollout says status (a shallow copy; the cached node is not changed).
func nodeWithStatus(node *corev1.Node, rollout skyhookv1.RolloutRef, status skyhookv1.Status) *corev1.Node {
	copied := *node
	copied.Labels = make(map[string]string, len(node.Labels)+1)
	for k, v := range node.Labels {
		copied.Labels[k] = v
	}
	copied.Labels[rollout.StatusKey()] = string(status)
	return &copied
}
