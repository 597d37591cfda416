package reconcile

import (
	"context"

	"github.com/fluxcd/pkg/runtime/patch"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// reconcileKind reconciles one rollout object of the kind, Flux style: get,
// patch helper with a deferred status patch, the twin (twins.go: which of
// a Skyhook and a NodeWright of one name leads), finalizer, suspend
// (disable/pause), rollout. The engine works on the object's view
// (rolloutKind); the patch helper patches the object itself.
func (r *SkyhookReconciler) reconcileKind(ctx context.Context, k *rollouts.Kind, req ctrl.Request) (result ctrl.Result, retErr error) {
	obj := k.New()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget("", k.Named(req.Name)) // also when its finalizer was taken off by hand
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	sk := k.View(obj)
	r.memory.Track(sk.UID, skyhookv1.RefOf(sk))
	patcher := patch.NewSerialPatcher(obj, r.rolloutWriter(sk.UID))
	before := sk.DeepCopy()
	defer func() {
		k.Apply(obj, sk)
		wait, err := r.finalizeStatus(ctx, patcher, before, obj)
		if wait > 0 && (result.RequeueAfter <= 0 || wait < result.RequeueAfter) {
			result.RequeueAfter = wait
		}
		if err != nil {
			retErr = err
		}
	}()

	if result, done, err := r.leadOrDefer(ctx, sk); done {
		return result, err
	}
	if !sk.DeletionTimestamp.IsZero() {
		return r.delete(ctx, sk)
	}
	if adoptFinalizer(sk) || r.stampVersion(sk) || r.resetBatches(sk) {
		return ctrl.Result{Requeue: true}, nil
	}
	if sk.Annotations[k.DisableAnnotation()] == "true" {
		report.MarkDisabled(sk)
		observeStatus(skyhookv1.RefOf(sk), skyhookv1.StatusDisabled)
		return r.markDisabledNodes(ctx, sk)
	}
	return r.rollout(ctx, sk)
}

// stampVersion writes the operator's version on the rollout's object (the
// version annotation of its kind), as NodeWright does, and reports whether
// it changed.
func (r *SkyhookReconciler) stampVersion(sk *skyhookv1.Skyhook) bool {
	key := skyhookv1.KindOf(sk).VersionAnnotation()
	if r.OperatorVersion == "" || sk.Annotations[key] == r.OperatorVersion {
		return false
	}
	if sk.Annotations == nil {
		sk.Annotations = map[string]string{}
	}
	sk.Annotations[key] = r.OperatorVersion
	return true
}
