package reconcile

import (
	"context"

	"github.com/fluxcd/pkg/runtime/patch"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// Reconcile implements reconcile.Reconciler, Flux style: get, patch helper
// with a deferred status patch, finalizer, suspend (disable/pause), rollout.
func (r *SkyhookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	sk := &skyhookv1.Skyhook{}
	if err := r.Client.Get(ctx, req.NamespacedName, sk); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget("", req.Name) // also when its finalizer was taken off by hand
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	r.memory.Track(sk.UID, sk.Name)
	patcher := patch.NewSerialPatcher(sk, r.Client)
	before := sk.DeepCopy()
	defer func() {
		wait, err := r.finalizeStatus(ctx, patcher, before, sk)
		if wait > 0 && (result.RequeueAfter <= 0 || wait < result.RequeueAfter) {
			result.RequeueAfter = wait
		}
		if err != nil {
			retErr = err
		}
	}()

	if !sk.DeletionTimestamp.IsZero() {
		return r.delete(ctx, sk)
	}
	if adoptFinalizer(sk) || r.stampVersion(sk) || r.resetBatches(sk) {
		return ctrl.Result{Requeue: true}, nil
	}
	if sk.Annotations[skyhookv1.DisableAnnotation] == "true" {
		report.MarkDisabled(sk)
		observeStatus(sk.Name, skyhookv1.StatusDisabled)
		return r.markDisabledNodes(ctx, sk)
	}
	return r.rollout(ctx, sk)
}

// stampVersion writes the operator's version on the Skyhook, as NodeWright
// does, and reports whether it changed.
func (r *SkyhookReconciler) stampVersion(sk *skyhookv1.Skyhook) bool {
	if r.OperatorVersion == "" || sk.Annotations[skyhookv1.SkyhookVersionAnnotation] == r.OperatorVersion {
		return false
	}
	if sk.Annotations == nil {
		sk.Annotations = map[string]string{}
	}
	sk.Annotations[skyhookv1.SkyhookVersionAnnotation] = r.OperatorVersion
	return true
}
