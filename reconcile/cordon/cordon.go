// Package cordon cordons a node for an interrupt and records which rollout
// (a Skyhook or a NodeWright) did, so that a rollout lifts only its own
// cordon: never one an admin, or another rollout, placed.
package cordon

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Annotation on a node names the Skyhook (name/uid) that cordoned it.
const Annotation = skyhookv1.MetadataPrefix + "/cordoned-by"

// AnnotationOf is Annotation for the rollouts of the kind: under its
// prefix.
func AnnotationOf(kind skyhookv1.RolloutKind) string { return kind.Prefix + "/cordoned-by" }

// Owner is how a rollout signs its cordons: its name and UID, so a Skyhook
// deleted and created again under the same name does not own the old one's.
func Owner(sk *skyhookv1.Skyhook) string { return sk.Name + "/" + string(sk.UID) }

// OwnedBy reports whether the node's cordon is the rollout's: signed by it,
// or, unsigned, marked with NodeWright's cordon_<name> (a cordon its
// operator placed before this one took over).
func OwnedBy(node *corev1.Node, sk *skyhookv1.Skyhook) bool {
	ref := skyhookv1.RefOf(sk)
	signed, hasSignature := node.Annotations[AnnotationOf(ref.Kind)]
	if hasSignature {
		return signed == Owner(sk)
	}
	return node.Spec.Unschedulable && node.Annotations[ref.CordonAnnotation()] == "true"
}

// Patch is the merge patch that cordons the node and signs the cordon, or
// nil when the node is already cordoned (by anyone: a cordon placed by
// someone else stays theirs).
func Patch(node *corev1.Node, sk *skyhookv1.Skyhook) ([]byte, error) {
	if node.Spec.Unschedulable {
		return nil, nil
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{AnnotationOf(skyhookv1.KindOf(sk)): Owner(sk), skyhookv1.RefOf(sk).CordonAnnotation(): "true"}},
		"spec":     map[string]any{"unschedulable": true},
	})
}

// Release is the merge patch that lifts the Skyhook's cordon, or nil when
// the node's cordon is not the Skyhook's (or there is none). An admin who
// cordoned the node after the Skyhook did cannot be told apart; the
// signature says the cordon is the Skyhook's, so it is lifted.
//
// A node marked runtimeRequiredCordon (NodeWright v0.19's cordon after the
// runtime-required taint) stays cordoned: only the marks go.
func Release(node *corev1.Node, sk *skyhookv1.Skyhook) ([]byte, error) {
	if !OwnedBy(node, sk) {
		return nil, nil
	}
	patch := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{AnnotationOf(skyhookv1.KindOf(sk)): nil, skyhookv1.RefOf(sk).CordonAnnotation(): nil}},
	}
	if !runtimeRequiredCordon(node) {
		patch["spec"] = map[string]any{"unschedulable": nil}
	}
	return json.Marshal(patch)
}

// runtimeRequiredCordon reports whether a rollout of any kind marked the
// node's cordon as the one after its runtime-required taint.
func runtimeRequiredCordon(node *corev1.Node) bool {
	for _, k := range skyhookv1.RolloutKinds {
		if node.Annotations[k.RuntimeRequiredCordonAnnotation()] == "true" {
			return true
		}
	}
	return false
}

// Handover makes the cordon from placed on the node the cordon of to (the
// same rollout under the other kind, see nodestate.Handover), in place:
// signed by to and marked with to's cordon_<name>, so that to lifts it
// after the interrupt. It reports whether it changed the node; from may be
// gone, its cordons are known by name.
func Handover(node *corev1.Node, from skyhookv1.RolloutRef, to *skyhookv1.Skyhook) bool {
	signatureKey := AnnotationOf(from.Kind)
	signature, signed := node.Annotations[signatureKey]
	signedByFrom := signed && strings.HasPrefix(signature, from.Name+"/")
	mark, marked := node.Annotations[from.CordonAnnotation()]
	if signedByFrom {
		delete(node.Annotations, signatureKey)
		node.Annotations[AnnotationOf(skyhookv1.KindOf(to))] = Owner(to)
	}
	if marked {
		delete(node.Annotations, from.CordonAnnotation())
		node.Annotations[skyhookv1.RefOf(to).CordonAnnotation()] = mark
	}
	return signedByFrom || marked
}
