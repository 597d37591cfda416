package reconcile

import (
	"context"
	"maps"

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

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// The watches of the Skyhook reconciler: what it is set up with, the field
// indexes of the cache, and which Skyhooks a node, a stage pod, a
// DeploymentPolicy or another Skyhook maps to. Each map notes in the
// reconciler's memory which nodes changed for the Skyhook's next pass
// (memory.Changes), so that the pass visits those only.

// podNodeField indexes the cached pods by spec.nodeName, so a pass that
// visits a few nodes reads their stage pods without listing every pod.
const podNodeField = "spec.nodeName"

// nodeNameField indexes the cached nodes by name, so a pass reads one node
// without a copy (see readVisited).
const nodeNameField = "metadata.name"

// SetupWithManager watches Skyhooks, their stage pods, and the nodes.
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
	return ctrl.NewControllerManagedBy(mgr).
		Named("skyhook").
		For(&skyhookv1.Skyhook{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.skyhookForPod), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == r.Namespace
		}))).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.skyhooksForNode), builder.WithPredicates(nodeChanged)).
		Watches(&skyhookv1.DeploymentPolicy{}, handler.EnqueueRequestsFromMapFunc(r.skyhooksForPolicy)).
		Watches(&skyhookv1.Skyhook{}, handler.EnqueueRequestsFromMapFunc(r.skyhooksAfter)).
		Complete(r)
}

// skyhooksForNode maps a node to the Skyhooks that select it or have a
// record on it.
func (r *SkyhookReconciler) skyhooksForNode(ctx context.Context, o client.Object) []ctrl.Request {
	node, ok := o.(*corev1.Node)
	if !ok {
		return nil
	}
	return r.skyhooksWhere(ctx, func(sk *skyhookv1.Skyhook) bool {
		_, recorded := node.Annotations[skyhookv1.NodeStateAnnotation(sk.Name)]
		if !recorded && !selects(sk, node) {
			return false
		}
		// Called for the node before and after an update, so a node that
		// leaves the selector is noted too.
		r.memory.Changes.Node(sk.Name, node.Name)
		return true
	})
}

// skyhookForPod maps a stage pod to the Skyhook that owns it, noting its
// node as changed for that Skyhook's next pass.
func (r *SkyhookReconciler) skyhookForPod(_ context.Context, o client.Object) []ctrl.Request {
	owner := metav1.GetControllerOf(o)
	if owner == nil || owner.Kind != "Skyhook" || owner.APIVersion != skyhookv1.GroupVersion.String() {
		return nil
	}
	if pod, ok := o.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
		r.memory.Changes.Node(owner.Name, pod.Spec.NodeName)
	}
	return []ctrl.Request{{NamespacedName: types.NamespacedName{Name: owner.Name}}}
}

// skyhooksForPolicy maps a DeploymentPolicy to the Skyhooks that use it.
func (r *SkyhookReconciler) skyhooksForPolicy(ctx context.Context, o client.Object) []ctrl.Request {
	return r.skyhooksWhere(ctx, func(sk *skyhookv1.Skyhook) bool {
		if sk.Spec.DeploymentPolicy != o.GetName() {
			return false
		}
		r.memory.Changes.All(sk.Name)
		return true
	})
}

// skyhooksAfter maps a Skyhook with sequencing "all" to the Skyhooks that
// go after it: its status is what they wait for.
func (r *SkyhookReconciler) skyhooksAfter(ctx context.Context, o client.Object) []ctrl.Request {
	first, ok := o.(*skyhookv1.Skyhook)
	if !ok || first.Spec.Sequencing != skyhookv1.SequencingAll {
		return nil
	}
	return r.skyhooksWhere(ctx, func(sk *skyhookv1.Skyhook) bool {
		if !goesBefore(first, sk) {
			return false
		}
		r.memory.Changes.All(sk.Name)
		return true
	})
}

// skyhooksWhere are the requests of the Skyhooks that concern says an event
// concerns (it notes for each what changed).
func (r *SkyhookReconciler) skyhooksWhere(ctx context.Context, concerns func(*skyhookv1.Skyhook) bool) []ctrl.Request {
	var list skyhookv1.SkyhookList // read only: no copy of every Skyhook per event
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []ctrl.Request
	for i := range list.Items {
		if sk := &list.Items[i]; concerns(sk) {
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
