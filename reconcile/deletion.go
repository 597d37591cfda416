package reconcile

import (
	"context"
	"sort"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// Deleting a Skyhook, as NodeWright does: the packages that declare
// uninstall support (uninstall.enabled) are uninstalled from every node
// first, by the same rollout that installed them (budget, policy and
// interrupts apply); then the Skyhook's metadata leaves the nodes, the
// finalizer goes, and the operator forgets what it remembered of it (also
// when a reconcile finds a Skyhook gone that it did not finalize). The
// records of packages without uninstall support stay on the nodes: nothing
// removed their files.

// adoptFinalizer puts the finalizer of the rollout's kind on it (in place
// of this operator's legacy one on a Skyhook) and reports whether it
// changed anything.
func adoptFinalizer(sk *skyhookv1.Skyhook) bool {
	legacy := controllerutil.RemoveFinalizer(sk, legacyFinalizer)
	return controllerutil.AddFinalizer(sk, skyhookv1.KindOf(sk).Finalizer) || legacy
}

// delete drives a deleted Skyhook to the removal of its finalizer.
func (r *SkyhookReconciler) delete(ctx context.Context, sk *skyhookv1.Skyhook) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(sk, skyhookv1.KindOf(sk).Finalizer) && !controllerutil.ContainsFinalizer(sk, legacyFinalizer) {
		return ctrl.Result{}, nil
	}
	pending, malformed, err := r.pendingUninstalls(ctx, sk)
	if err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case len(malformed) > 0:
		conditions.MarkTrue(sk, skyhookv1.DeletionBlockedCondition, "MalformedNodeState",
			"the nodeState annotation of %s cannot be read, so what to uninstall is unknown; repair or remove it", report.NodeList(malformed))
		return ctrl.Result{}, nil
	case pending > 0 && sk.Annotations[skyhookv1.KindOf(sk).DisableAnnotation()] == "true":
		conditions.MarkTrue(sk, skyhookv1.DeletionBlockedCondition, "DisabledWithPendingUninstall",
			"%d nodes still have packages with uninstall.enabled; enable the Skyhook so they are uninstalled", pending)
		return ctrl.Result{}, nil
	case pending > 0 && sk.Annotations[skyhookv1.KindOf(sk).PauseAnnotation()] == "true":
		conditions.MarkTrue(sk, skyhookv1.DeletionBlockedCondition, "PausedWithPendingUninstall",
			"%d nodes still have packages with uninstall.enabled; resume the Skyhook so they are uninstalled", pending)
		return ctrl.Result{}, nil
	case pending > 0:
		conditions.Delete(sk, skyhookv1.DeletionBlockedCondition)
		return r.uninstallForDeletion(ctx, sk)
	}
	return ctrl.Result{}, r.finalize(ctx, sk)
}

// pendingUninstalls counts the nodes whose record holds a package of the
// Skyhook that declares uninstall support, and names the nodes whose record
// cannot be read.
func (r *SkyhookReconciler) pendingUninstalls(ctx context.Context, sk *skyhookv1.Skyhook) (int, []string, error) {
	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes, client.UnsafeDisableDeepCopy); err != nil {
		return 0, nil, err
	}
	var pending int
	var malformed []string
	for i := range nodes.Items {
		state, err := nodestate.Read(&nodes.Items[i], skyhookv1.RefOf(sk))
		if err != nil {
			malformed = append(malformed, nodes.Items[i].Name)
			continue
		}
		for _, e := range state {
			if p, ok := sk.Spec.Packages[e.Name]; ok && p.UninstallEnabled() && e.Version == p.Version {
				pending++
				break
			}
		}
	}
	sort.Strings(malformed)
	return pending, malformed, nil
}

// uninstallForDeletion runs a rollout of the Skyhook in which every
// package that declares uninstall support is asked to uninstall. The spec
// is changed on a copy only: the patch helper writes status, not spec.
func (r *SkyhookReconciler) uninstallForDeletion(ctx context.Context, sk *skyhookv1.Skyhook) (ctrl.Result, error) {
	view := sk.DeepCopy()
	for name, p := range view.Spec.Packages {
		if p.UninstallEnabled() {
			p.Uninstall = &skyhookv1.Uninstall{Enabled: true, Apply: true}
			view.Spec.Packages[name] = p
		}
	}
	result, err := r.rollout(ctx, view)
	sk.Status = view.Status
	return result, err
}

// finalize removes the Skyhook's metadata from every node, then the
// finalizer. Its stage pods and ConfigMaps go with it (owner references).
func (r *SkyhookReconciler) finalize(ctx context.Context, sk *skyhookv1.Skyhook) error {
	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes); err != nil {
		return err
	}
	var required []skyhookAhead
	if sk.Spec.RuntimeRequired {
		var err error
		if required, err = r.runtimeRequired(ctx); err != nil {
			return err
		}
	}
	for i := range nodes.Items {
		if err := r.cleanNode(ctx, sk, &nodes.Items[i], required); err != nil {
			return err
		}
	}
	r.forget(sk.UID, skyhookv1.RefOf(sk))
	controllerutil.RemoveFinalizer(sk, skyhookv1.KindOf(sk).Finalizer)
	controllerutil.RemoveFinalizer(sk, legacyFinalizer)
	return nil
}

// cleanNode lifts the Skyhook's cordon and runtime-required taint from the
// node and removes its metadata, keeping the records of packages that were
// not uninstalled.
func (r *SkyhookReconciler) cleanNode(ctx context.Context, sk *skyhookv1.Skyhook, node *corev1.Node, required []skyhookAhead) error {
	if err := r.releaseCordon(ctx, sk, node); err != nil {
		return err
	}
	if err := r.forgetNodeConditions(ctx, skyhookv1.RefOf(sk), node); err != nil {
		return err
	}
	// The taint this Skyhook held goes when no other runtimeRequired
	// Skyhook still holds it.
	if sk.Spec.RuntimeRequired && selects(sk, node) && runtimeTaintDone(required, node, skyhookv1.RefOf(sk)) {
		if err := r.changeTaint(ctx, node, r.removeRuntimeTaints); err != nil {
			return err
		}
	}
	state, err := nodestate.Read(node, skyhookv1.RefOf(sk))
	if err != nil {
		state = nil // delete only gets here with every record readable; a record broken since starts over
	}
	kept := skyhookv1.NodeState{}
	for key, e := range state {
		if p, ok := sk.Spec.Packages[e.Name]; !ok || !p.UninstallEnabled() {
			kept[key] = e
		}
	}
	p, err := nodestate.ForgetKeeping(node, skyhookv1.RefOf(sk), kept)
	if err != nil || p == nil {
		return err
	}
	return r.patchNode(ctx, node.Name, p)
}

// forget drops what the reconciler remembers of a rollout that is gone,
// and its metrics; an empty uid is the one last seen under its kind and
// name.
func (r *SkyhookReconciler) forget(uid types.UID, rollout skyhookv1.RolloutRef) {
	r.memory.Forget(uid, rollout)
	forgetMetrics(rollout)
}
