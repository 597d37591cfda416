package reconcile

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/skyhook-go/skyhook/api/nodestate"
	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/reconcile/report"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// Twins: a Skyhook and a NodeWright of the same name are one rollout.
// NodeWright's migration mirrors each Skyhook into a NodeWright of its name
// and leaves both in the cluster; renaming a manifest's kind in Git has
// Flux or a PackageSet apply the new object and then prune the old one.
// Either way the packages are on the nodes once, so one of the two rolls
// them out (it leads) and the other only reports the leader's status:
// never two sets of stage pods, and deleting the one that does not lead
// uninstalls nothing and takes nothing off the nodes.
//
// The leader takes over what its twin has on the nodes: its records (moved
// to the leader's keys, or dropped as stale copies when the leader has its
// own), its cordons and its stage pods, so no completed stage runs again
// and a stage in flight is read, not started twice.

// twinRequeue is how soon a leader that handed records over looks again:
// its pass waits until the cache shows them moved.
const twinRequeue = time.Second

// twinOf reads sk's twin, as a view; nil when there is none. A deleted
// rollout asks the API server when the cache has no twin: Flux creates the
// renamed object just before it prunes the old one, and a delete that
// missed it would uninstall what the new one is about to take over.
func (r *SkyhookReconciler) twinOf(ctx context.Context, sk *skyhookv1.Skyhook) (*skyhookv1.Skyhook, error) {
	k := rollouts.Of(sk).Twin()
	obj := k.New()
	err := r.Client.Get(ctx, client.ObjectKey{Name: sk.Name}, obj)
	if apierrors.IsNotFound(err) && !sk.DeletionTimestamp.IsZero() {
		err = r.APIReader.Get(ctx, client.ObjectKey{Name: sk.Name}, obj)
	}
	if err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return k.View(obj), nil
}

// leads reports whether sk, not its twin, rolls out the packages of their
// name: the one that is not being deleted, and the NodeWright when both or
// neither are (NodeWright's kind succeeds the seeds').
func leads(sk, twin *skyhookv1.Skyhook) bool {
	if twin == nil {
		return true
	}
	if going, twinGoing := !sk.DeletionTimestamp.IsZero(), !twin.DeletionTimestamp.IsZero(); going != twinGoing {
		return twinGoing
	}
	return skyhookv1.KindOf(sk) == skyhookv1.NodeWrights
}

// Leads is leads for those outside the reconciler that must pick the same
// object of a name (the CLI).
func Leads(sk, twin *skyhookv1.Skyhook) bool { return leads(sk, twin) }

// leaders are the rollouts among all that lead (see leads).
func leaders(all []*skyhookv1.Skyhook) []*skyhookv1.Skyhook {
	byRef := map[skyhookv1.RolloutRef]*skyhookv1.Skyhook{}
	for _, sk := range all {
		byRef[skyhookv1.RefOf(sk)] = sk
	}
	out := all[:0:0]
	for _, sk := range all {
		if leads(sk, byRef[rollouts.Of(sk).Twin().Named(sk.Name)]) {
			out = append(out, sk)
		}
	}
	return out
}

// superseded reconciles a rollout whose twin leads: it reports the twin's
// status and, deleted, lets go once the twin holds its stage pods.
func (r *SkyhookReconciler) superseded(ctx context.Context, sk, twin *skyhookv1.Skyhook) (ctrl.Result, error) {
	r.forget(sk.UID, skyhookv1.RefOf(sk)) // it remembers nothing while the twin leads
	if sk.DeletionTimestamp.IsZero() {
		adoptFinalizer(sk)
		report.Superseded(sk, twin)
		return ctrl.Result{}, nil
	}
	// Gone while it still owns a running stage pod, the garbage collector
	// would delete that pod with it, and the twin run the stage again:
	// the twin adopts the pods first (takeOver).
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(r.Namespace), client.MatchingLabels{skyhookv1.KindOf(sk).OwnerLabel(): sk.Name}); err != nil {
		return ctrl.Result{}, err
	}
	for i := range pods.Items {
		if owner := metav1.GetControllerOf(&pods.Items[i]); owner != nil && owner.UID == sk.UID {
			return ctrl.Result{RequeueAfter: twinRequeue}, nil
		}
	}
	if controllerutil.RemoveFinalizer(sk, skyhookv1.KindOf(sk).Finalizer) || controllerutil.RemoveFinalizer(sk, legacyFinalizer) {
		r.Recorder.Eventf(sk, nil, corev1.EventTypeNormal, "HandedOver", "Delete",
			"deleted while %s rolls out its packages: nothing is uninstalled and its records stay on the nodes for %s",
			skyhookv1.RefOf(twin), skyhookv1.RefOf(twin))
	}
	return ctrl.Result{}, nil
}

// takeOver hands what sk's twin has on the nodes and in stage pods to sk,
// and reports whether anything moved: the pass then waits for the cache.
// It runs whether or not the twin exists: a twin deleted before sk's first
// pass leaves its records for sk.
func (r *SkyhookReconciler) takeOver(ctx context.Context, sk *skyhookv1.Skyhook) (bool, error) {
	from := rollouts.Of(sk).Twin().Named(sk.Name)
	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes, client.MatchingFields{nodeRecordsField: from.String()}); err != nil {
		return false, err
	}
	for i := range nodes.Items {
		if err := r.takeOverNode(ctx, sk, from, nodes.Items[i].Name); err != nil {
			return false, err
		}
	}
	pods, err := r.adoptStagePods(ctx, sk, from)
	if err != nil {
		return false, err
	}
	if len(nodes.Items) == 0 && pods == 0 {
		return false, nil
	}
	r.memory.DropView(skyhookv1.RefOf(sk)) // the next pass reads every node again
	r.Recorder.Eventf(sk, nil, corev1.EventTypeNormal, "TookOver", "Handover",
		"took over the records of %s on %d nodes and %d of its stage pods", from, len(nodes.Items), pods)
	return true, nil
}

// takeOverNode moves the twin's record and cordon on one node to sk,
// reading the node from the API server and writing with its
// resourceVersion: a stale read must not move an old record over a newer
// one. The twin's node conditions go; sk's pass writes its own.
func (r *SkyhookReconciler) takeOverNode(ctx context.Context, sk *skyhookv1.Skyhook, from skyhookv1.RolloutRef, name string) error {
	var node corev1.Node
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
		return client.IgnoreNotFound(err)
	}
	before := node.DeepCopy()
	moved := nodestate.Handover(&node, from, skyhookv1.RefOf(sk))
	moved = cordon.Handover(&node, from, sk) || moved
	if moved {
		err := r.Client.Patch(ctx, &node, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
		if err != nil && !apierrors.IsNotFound(err) {
			return err // a conflict: the requeue reads the node again
		}
	}
	return r.forgetNodeConditions(ctx, from, &node)
}

// adoptStagePods makes the twin's stage pods sk's (stagepod.Adopt) and
// counts them.
func (r *SkyhookReconciler) adoptStagePods(ctx context.Context, sk *skyhookv1.Skyhook, from skyhookv1.RolloutRef) (int, error) {
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(r.Namespace), client.MatchingLabels{from.Kind.OwnerLabel(): from.Name}); err != nil {
		return 0, err
	}
	adopted := 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		before := pod.DeepCopy()
		if !stagepod.Adopt(pod, sk) {
			continue
		}
		if err := r.Client.Patch(ctx, pod, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
			return adopted, err
		}
		adopted++
	}
	return adopted, nil
}

// leadOrDefer is the twins' part of a reconcile: a rollout whose twin
// leads is superseded (done), a leader first takes over what its twin
// left (done until the cache shows it).
func (r *SkyhookReconciler) leadOrDefer(ctx context.Context, sk *skyhookv1.Skyhook) (ctrl.Result, bool, error) {
	twin, err := r.twinOf(ctx, sk)
	if err != nil {
		return ctrl.Result{}, true, err
	}
	if !leads(sk, twin) {
		result, err := r.superseded(ctx, sk, twin)
		return result, true, err
	}
	moved, err := r.takeOver(ctx, sk)
	if err != nil || moved {
		return ctrl.Result{RequeueAfter: twinRequeue}, true, err
	}
	return ctrl.Result{}, false, nil
}
