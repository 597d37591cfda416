// Package cordon cordons a node for an interrupt and records which Skyhook
// did, so that a Skyhook lifts only its own cordon: never one an admin, or
// another Skyhook, placed.
package cordon

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Annotation on a node names the Skyhook (name/uid) that cordoned it.
const Annotation = skyhookv1.MetadataPrefix + "/cordoned-by"

// Owner is how a Skyhook signs its cordons: its name and UID, so a Skyhook
// deleted and created again under the same name does not own the old one's.
func Owner(sk *skyhookv1.Skyhook) string { return sk.Name + "/" + string(sk.UID) }

// OwnedBy reports whether the node's cordon is the Skyhook's: signed by it,
// or, unsigned, marked with NodeWright's cordon_<skyhook> (a cordon its
// operator placed before this one took over).
func OwnedBy(node *corev1.Node, sk *skyhookv1.Skyhook) bool {
	signed, hasSignature := node.Annotations[Annotation]
	if hasSignature {
		return signed == Owner(sk)
	}
	return node.Spec.Unschedulable && node.Annotations[skyhookv1.CordonAnnotation(sk.Name)] == "true"
}

// Patch is the merge patch that cordons the node and signs the cordon, or
// nil when the node is already cordoned (by anyone: a cordon placed by
// someone else stays theirs).
func Patch(node *corev1.Node, sk *skyhookv1.Skyhook) ([]byte, error) {
	if node.Spec.Unschedulable {
		return nil, nil
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{Annotation: Owner(sk), skyhookv1.CordonAnnotation(sk.Name): "true"}},
		"spec":     map[string]any{"unschedulable": true},
	})
}

// Release is the merge patch that lifts the Skyhook's cordon, or nil when
// the node's cordon is not the Skyhook's (or there is none). An admin who
// cordoned the node after the Skyhook did cannot be told apart; the
// signature says the cordon is the Skyhook's, so it is lifted.
func Release(node *corev1.Node, sk *skyhookv1.Skyhook) ([]byte, error) {
	if !OwnedBy(node, sk) {
		return nil, nil
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{Annotation: nil, skyhookv1.CordonAnnotation(sk.Name): nil}},
		"spec":     map[string]any{"unschedulable": nil},
	})
}
