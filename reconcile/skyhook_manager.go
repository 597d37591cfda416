package reconcile

import (
	"context"
	"maps"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/upstreamjob"
)

// The watches of the rollout reconciler: what it is set up with, the field
// indexes of the cache, one controller per kind of rollout object
// (rollouts.Kinds), and which rollouts of the controller's kind a node, a
// stage pod, a DeploymentPolicy or a rollout of any kind maps to. Each map
// notes in the reconciler's memory which nodes changed for the rollout's
// next pass (memory.Changes), so that the pass visits those only.

// podNodeField indexes the cached pods by spec.nodeName, so a pass that
// visits a few nodes reads their stage pods without listing every pod.
const podNodeField = "spec.nodeName"

// nodeNameField indexes the cached nodes by name, so a pass reads one node
// without a copy (see readVisited).
const nodeNameField = "metadata.name"

// jobNodeField indexes the cached Jobs (NodeWright's stage Jobs, see
// upstreamjob) by the node their pods are pinned to.
const jobNodeField = "spec.template.spec.nodeName"

// nodeRecordsField indexes the cached nodes by the rollouts that keep a
// record on them ("<Kind>/<name>", see skyhookv1.RecordOf), so a leader
// finds its twin's records (takeOver) without reading every node.
const nodeRecordsField = "rollout.records"

// SetupWithManager watches the rollouts of every kind, their stage pods,
// the nodes and the DeploymentPolicies.
func (r *SkyhookReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.setDefaults(mgr.GetAPIReader())
	if err := mgr.Add(collectWhileRunning{&r.memory}); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podNodeField, func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Node{}, nodeNameField, func(o client.Object) []string {
		return []string{o.GetName()}
	}); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Node{}, nodeRecordsField, recordsOn); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &batchv1.Job{}, jobNodeField, func(o client.Object) []string {
		return []string{o.(*batchv1.Job).Spec.Template.Spec.NodeName}
	}); err != nil {
		return err
	}
	for _, k := range rollouts.Kinds {
		if err := r.setupKind(mgr, k); err != nil {
			return err
		}
	}
	return nil
}

// setupKind is the controller of one kind of rollout object.
func (r *SkyhookReconciler) setupKind(mgr ctrl.Manager, k *rollouts.Kind) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(strings.ToLower(k.Kind)).
		For(k.New()).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.rolloutForPod(k)), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == r.Namespace
		}))).
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(r.rolloutForJob(k)), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == r.Namespace
		}))).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.rolloutsForNode(k)), builder.WithPredicates(nodeChanged)).
		Watches(k.Policy(), handler.EnqueueRequestsFromMapFunc(r.rolloutsForPolicy(k))).
		Watches(&skyhookv1.NodeDisruptionBudget{}, handler.EnqueueRequestsFromMapFunc(r.rolloutsForBudget(k)), builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	for _, other := range rollouts.Kinds { // the rollouts that go first may be of any kind
		b = b.Watches(other.New(), handler.EnqueueRequestsFromMapFunc(r.rolloutsAfter(k, other)))
	}
	// A rollout follows its twin: the twin's status, and who leads.
	b = b.Watches(k.Twin().New(), handler.EnqueueRequestsFromMapFunc(r.twinOfObject(k)))
	return b.Complete(reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		return r.reconcileKind(ctx, k, req)
	}))
}

// rolloutsForNode maps a node to the kind's rollouts that select it or
// have a record on it.
func (r *SkyhookReconciler) rolloutsForNode(k *rollouts.Kind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		node, ok := o.(*corev1.Node)
		if !ok {
			return nil
		}
		return r.rolloutsWhere(ctx, k, func(sk *skyhookv1.Skyhook) bool {
			ref := skyhookv1.RefOf(sk)
			_, recorded := node.Annotations[ref.NodeStateAnnotation()]
			if !recorded && !selects(sk, node) {
				return false
			}
			// Called for the node before and after an update, so a node
			// that leaves the selector is noted too.
			r.memory.Changes.Node(ref, node.Name)
			return true
		})
	}
}

// rolloutForPod maps a stage pod of the kind's rollouts to the rollout that
// owns it, noting its node as changed for that rollout's next pass.
func (r *SkyhookReconciler) rolloutForPod(k *rollouts.Kind) handler.MapFunc {
	return func(_ context.Context, o client.Object) []ctrl.Request {
		owner := metav1.GetControllerOf(o)
		if owner == nil || owner.Kind != k.Kind || owner.APIVersion != k.GroupVersion().String() {
			return nil
		}
		if pod, ok := o.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
			r.memory.Changes.Node(k.Named(owner.Name), pod.Spec.NodeName)
		}
		return []ctrl.Request{{NamespacedName: types.NamespacedName{Name: owner.Name}}}
	}
}

// rolloutForJob maps a stage Job NodeWright left for a rollout of the kind
// (upstreamjob) to that rollout, noting its node as changed.
func (r *SkyhookReconciler) rolloutForJob(k *rollouts.Kind) handler.MapFunc {
	return func(_ context.Context, o client.Object) []ctrl.Request {
		job, ok := o.(*batchv1.Job)
		if !ok {
			return nil
		}
		name := job.Labels[upstreamjob.NameLabel(k.RolloutKind)]
		if name == "" {
			return nil
		}
		if node := job.Spec.Template.Spec.NodeName; node != "" {
			r.memory.Changes.Node(k.Named(name), node)
		}
		return []ctrl.Request{{NamespacedName: types.NamespacedName{Name: name}}}
	}
}

// rolloutsForPolicy maps a DeploymentPolicy of the kind's group to the
// kind's rollouts that use it.
func (r *SkyhookReconciler) rolloutsForPolicy(k *rollouts.Kind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		return r.rolloutsWhere(ctx, k, func(sk *skyhookv1.Skyhook) bool {
			if sk.Spec.DeploymentPolicy != o.GetName() {
				return false
			}
			r.memory.Changes.All(skyhookv1.RefOf(sk))
			return true
		})
	}
}

// rolloutsForBudget maps a NodeDisruptionBudget, made or changed, to every
// rollout of the kind: a budget may select any node.
func (r *SkyhookReconciler) rolloutsForBudget(k *rollouts.Kind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		return r.rolloutsWhere(ctx, k, func(sk *skyhookv1.Skyhook) bool {
			r.memory.Changes.All(skyhookv1.RefOf(sk))
			return true
		})
	}
}

// rolloutsAfter maps a rollout of the other kind with sequencing "all" to
// the kind's rollouts that go after it: its status is what they wait for.
func (r *SkyhookReconciler) rolloutsAfter(k, other *rollouts.Kind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		first := other.View(o)
		if first.Spec.Sequencing != skyhookv1.SequencingAll {
			return nil
		}
		return r.rolloutsWhere(ctx, k, func(sk *skyhookv1.Skyhook) bool {
			if !goesBefore(first, sk) {
				return false
			}
			r.memory.Changes.All(skyhookv1.RefOf(sk))
			return true
		})
	}
}

// twinOfObject maps a rollout of the other kind to the kind's rollout of
// its name, if there is one (see twins.go).
func (r *SkyhookReconciler) twinOfObject(k *rollouts.Kind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		if err := r.Client.Get(ctx, client.ObjectKey{Name: o.GetName()}, k.New()); err != nil {
			return nil
		}
		return []ctrl.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
	}
}

// recordsOn are the rollouts with a record on a node, for nodeRecordsField.
func recordsOn(o client.Object) []string {
	var refs []string
	for key := range o.GetAnnotations() {
		if ref, ok := skyhookv1.RecordOf(key); ok {
			refs = append(refs, ref.String())
		}
	}
	return refs
}

// rolloutsWhere are the requests of the kind's rollouts that concerns says
// an event concerns (it notes for each what changed).
func (r *SkyhookReconciler) rolloutsWhere(ctx context.Context, k *rollouts.Kind, concerns func(*skyhookv1.Skyhook) bool) []ctrl.Request {
	views, err := k.List(ctx, r.Client, client.UnsafeDisableDeepCopy) // read only: no copy of every rollout per event
	if err != nil {
		return nil
	}
	var reqs []ctrl.Request
	for _, sk := range views {
		if concerns(sk) {
			reqs = append(reqs, ctrl.Request{NamespacedName: types.NamespacedName{Name: sk.Name}})
		}
	}
	return reqs
}

// nodeChanged lets through node events that can change a rollout: not the
// heartbeats a kubelet (or KWOK) sends every few seconds.
var nodeChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldNode, ok1 := e.ObjectOld.(*corev1.Node)
		newNode, ok2 := e.ObjectNew.(*corev1.Node)
		if !ok1 || !ok2 {
			return true
		}
		return !maps.Equal(oldNode.Labels, newNode.Labels) || !maps.Equal(oldNode.Annotations, newNode.Annotations) ||
			!equality.Semantic.DeepEqual(oldNode.Spec.Taints, newNode.Spec.Taints) ||
			oldNode.Spec.Unschedulable != newNode.Spec.Unschedulable ||
			ready(oldNode) != ready(newNode) || oldNode.Status.NodeInfo.BootID != newNode.Status.NodeInfo.BootID
	},
}

// selects reports whether the Skyhook's node selector matches the node.
func selects(sk *skyhookv1.Skyhook, node *corev1.Node) bool {
	sel, err := metav1.LabelSelectorAsSelector(&sk.Spec.NodeSelector)
	return err == nil && sel.Matches(labels.Set(node.Labels))
}
