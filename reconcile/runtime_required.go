package reconcile

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/taints"
)

// The runtime-required taint (SkyhookReconciler.RuntimeRequiredTaint) keeps
// workloads off a node until every runtimeRequired Skyhook that selects it
// is complete there. Stage pods of every Skyhook tolerate it
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
	for _, w := range work {
		if !untouched(w.node, pass.ref.Kind) || taints.Has(w.node, r.RuntimeRequiredTaint) {
			continue
		}
		pool.changeTaints(w.node, taints.AddToNew(pass.ref.Kind))
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

// runtimeTaints takes the runtime-required taint off the Skyhook's complete
// nodes where every runtimeRequired Skyhook is complete.
func (pass *rolloutPass) runtimeTaints(ctx context.Context, work []*nodeWork, pool *nodePool) error {
	r, sk := pass.r, pass.sk
	if !sk.Spec.RuntimeRequired {
		return nil
	}
	var required []skyhookAhead
	for _, w := range work {
		if w.now != skyhookv1.StatusComplete || !taints.Has(w.node, r.RuntimeRequiredTaint) {
			continue
		}
		if required == nil {
			var err error
			if required, err = r.runtimeRequired(ctx); err != nil {
				return err
			}
		}
		// This Skyhook's own label may lag its completion in this pass.
		if runtimeTaintDone(required, nodeWithStatus(w.node, pass.ref, skyhookv1.StatusComplete), skyhookv1.RolloutRef{}) {
			pool.changeTaints(w.node, taints.Remove)
		}
	}
	return nil
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
