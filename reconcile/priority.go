package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Ordering between Skyhooks: on a node, a Skyhook starts only once every
// Skyhook that goes before it (a lower priority number; ties by name) and
// selects the node is complete there.

// skyhookAhead is another Skyhook that matters on the nodes it selects,
// with its node selector parsed once per pass rather than once per node.
type skyhookAhead struct {
	name     string
	selector labels.Selector
	// everywhere: the Skyhook has sequencing "all" and is not complete on
	// all its nodes yet, so it holds every node, not only its own.
	everywhere bool
}

// otherSkyhooks lists the Skyhooks that count for keep (see selectorsOf).
func (r *SkyhookReconciler) otherSkyhooks(ctx context.Context, keep func(*skyhookv1.Skyhook) bool) ([]skyhookAhead, error) {
	var list skyhookv1.SkyhookList // read only: no copy of every Skyhook per pass
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return selectorsOf(list.Items, keep), nil
}

// selectorsOf are the Skyhooks that count for keep, skipping disabled and
// deleted ones, with their selectors parsed.
func selectorsOf(skyhooks []skyhookv1.Skyhook, keep func(*skyhookv1.Skyhook) bool) []skyhookAhead {
	var out []skyhookAhead
	for i := range skyhooks {
		other := &skyhooks[i]
		if !other.DeletionTimestamp.IsZero() || other.Annotations[skyhookv1.DisableAnnotation] == "true" || !keep(other) {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&other.Spec.NodeSelector)
		if err != nil {
			continue // admission refuses such selectors; it selects nothing
		}
		out = append(out, skyhookAhead{name: other.Name, selector: sel, everywhere: other.Spec.Sequencing == skyhookv1.SequencingAll && !completeEverywhere(other)})
	}
	return out
}

// goesBefore reports whether other goes before sk on a node they share:
// a lower priority number, or the same and a name before sk's. Paused
// Skyhooks hold the ones after them (selectorsOf skips only disabled ones).
func goesBefore(other, sk *skyhookv1.Skyhook) bool {
	return other.Name != sk.Name &&
		(other.Spec.Priority < sk.Spec.Priority || (other.Spec.Priority == sk.Spec.Priority && other.Name < sk.Name))
}

// skyhooksAhead are the Skyhooks that go before sk on a node they share.
func (r *SkyhookReconciler) skyhooksAhead(ctx context.Context, sk *skyhookv1.Skyhook) ([]skyhookAhead, error) {
	return r.otherSkyhooks(ctx, func(other *skyhookv1.Skyhook) bool { return goesBefore(other, sk) })
}

// waitingFor names the first Skyhook ahead that holds the node, or is
// empty: one that selects the node and is not complete on it, or one with
// sequencing "all" not complete on all its nodes.
func waitingFor(ahead []skyhookAhead, node *corev1.Node) string {
	for _, other := range ahead {
		if other.everywhere {
			return other.name
		}
		if other.selector.Matches(labels.Set(node.Labels)) && node.Labels[skyhookv1.StatusKey(other.name)] != string(skyhookv1.StatusComplete) {
			return other.name
		}
	}
	return ""
}

// heldEverywhere names the first Skyhook ahead with sequencing "all" that
// is not complete on all its nodes (it holds every node), or is empty.
func heldEverywhere(ahead []skyhookAhead) string {
	for _, other := range ahead {
		if other.everywhere {
			return other.name
		}
	}
	return ""
}

// completeEverywhere reports whether a Skyhook's status says its current
// generation is complete on every node it selects.
func completeEverywhere(sk *skyhookv1.Skyhook) bool {
	return sk.Status.Status == skyhookv1.StatusComplete && sk.Status.ObservedGeneration == sk.Generation
}
