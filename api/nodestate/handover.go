package nodestate

import (
	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Handover gives the record one rollout keeps on a node (from) to another
// (to), in place, and reports whether it changed the node: to is the same
// rollout under the other kind's prefix, as when a Skyhook is renamed to a
// NodeWright in Git, or when NodeWright's migration mirrored a Skyhook.
// When to has no record on the node, from's keys move to to's, values
// unchanged, so nothing done on the node is done again. When to has one,
// to's record is the one kept up to date and from's keys are stale copies
// (NodeWright's migration copies the keys and leaves the old ones beside
// them): they go, so that nothing can read them later.
func Handover(node *corev1.Node, from, to skyhookv1.RolloutRef) bool {
	_, toHasRecord := node.Annotations[to.NodeStateAnnotation()]
	changed := false
	toKeys := to.RecordAnnotations()
	for i, key := range from.RecordAnnotations() {
		value, ok := node.Annotations[key]
		if !ok {
			continue
		}
		delete(node.Annotations, key)
		if !toHasRecord {
			node.Annotations[toKeys[i]] = value
		}
		changed = true
	}
	if value, ok := node.Labels[from.StatusKey()]; ok {
		delete(node.Labels, from.StatusKey())
		if !toHasRecord {
			node.Labels[to.StatusKey()] = value
		}
		changed = true
	}
	return changed
}
