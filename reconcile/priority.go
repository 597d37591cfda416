package reconcile

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Ordering between rollouts, of any kind: on a node, a Skyhook or a
// NodeWright starts only once every rollout that goes before it (a lower
// priority number; ties by name, then kind) and selects the node is
// complete there. A Skyhook and a NodeWright selecting the same node so
// never work on it at once.

// skyhookAhead is another rollout that matters on the nodes it selects,
// with its node selector parsed once per pass rather than once per node.
type skyhookAhead struct {
	ref      skyhookv1.RolloutRef
	selector labels.Selector
	// everywhere: the rollout has sequencing "all" and is not complete on
	// all its nodes yet, so it holds every node, not only its own.
	everywhere bool
	// cordonAfter: a runtimeRequired rollout with runtimeRequiredCordonAfter.
	cordonAfter bool
}

// name is how messages name the rollout: a Skyhook by its name, a
// rollout of another kind with its kind (NodeWright/gpu).
func (a skyhookAhead) name() string {
	if a.ref.Kind == skyhookv1.Skyhooks {
		return a.ref.Name
	}
	return a.ref.String()
}

// otherSkyhooks lists the rollouts of every kind that count for keep (see
// selectorsOf).
func (r *SkyhookReconciler) otherSkyhooks(ctx context.Context, keep func(*skyhookv1.Skyhook) bool) ([]skyhookAhead, error) {
	rollouts, err := rollouts.ListAll(ctx, r.Client, client.UnsafeDisableDeepCopy)
	if err != nil {
		return nil, err
	}
	return selectorsOf(rollouts, keep), nil
}

// selectorsOf are the rollouts that count for keep, skipping disabled and
// deleted ones and those whose twin leads (twins.go), with their selectors
// parsed.
func selectorsOf(rollouts []*skyhookv1.Skyhook, keep func(*skyhookv1.Skyhook) bool) []skyhookAhead {
	var out []skyhookAhead
	for _, other := range leaders(rollouts) {
		kind := skyhookv1.KindOf(other)
		if !other.DeletionTimestamp.IsZero() || other.Annotations[kind.DisableAnnotation()] == "true" || !keep(other) {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&other.Spec.NodeSelector)
		if err != nil {
			continue // admission refuses such selectors; it selects nothing
		}
		out = append(out, skyhookAhead{ref: kind.Named(other.Name), selector: sel,
			everywhere:  other.Spec.Sequencing == skyhookv1.SequencingAll && !completeEverywhere(other),
			cordonAfter: other.Spec.RuntimeRequired && other.Spec.RuntimeRequiredCordonAfter})
	}
	return out
}

// goesBefore reports whether other goes before sk on a node they share:
// a lower priority number, or the same and a name before sk's, or the same
// name and a kind before sk's (a Skyhook before a NodeWright, the seeds'
// kind first). Paused rollouts hold the ones after them (selectorsOf skips
// only disabled ones).
func goesBefore(other, sk *skyhookv1.Skyhook) bool {
	if other.Spec.Priority != sk.Spec.Priority {
		return other.Spec.Priority < sk.Spec.Priority
	}
	if other.Name != sk.Name {
		return other.Name < sk.Name
	}
	return kindOrder(skyhookv1.KindOf(other)) < kindOrder(skyhookv1.KindOf(sk))
}

// kindOrder is the kind's place among skyhookv1.RolloutKinds.
func kindOrder(kind skyhookv1.RolloutKind) int { return slices.Index(skyhookv1.RolloutKinds, kind) }

// skyhooksAhead are the rollouts that go before sk on a node they share.
func (r *SkyhookReconciler) skyhooksAhead(ctx context.Context, sk *skyhookv1.Skyhook) ([]skyhookAhead, error) {
	return r.otherSkyhooks(ctx, func(other *skyhookv1.Skyhook) bool { return goesBefore(other, sk) })
}

// waitingFor names the first rollout ahead that holds the node, or is
// empty: one that selects the node and is not complete on it, or one with
// sequencing "all" not complete on all its nodes.
func waitingFor(ahead []skyhookAhead, node *corev1.Node) string {
	for _, other := range ahead {
		if other.everywhere {
			return other.name()
		}
		if other.selector.Matches(labels.Set(node.Labels)) && node.Labels[other.ref.StatusKey()] != string(skyhookv1.StatusComplete) {
			return other.name()
		}
	}
	return ""
}

// heldEverywhere names the first rollout ahead with sequencing "all" that
// is not complete on all its nodes (it holds every node), or is empty.
func heldEverywhere(ahead []skyhookAhead) string {
	for _, other := range ahead {
		if other.everywhere {
			return other.name()
		}
	}
	return ""
}

// completeEverywhere reports whether a Skyhook's status says its current
// generation is complete on every node it selects.
func completeEverywhere(sk *skyhookv1.Skyhook) bool {
	return sk.Status.Status == skyhookv1.StatusComplete && sk.Status.ObservedGeneration == sk.Generation
}
