// Package taints puts the runtime-required taint on a node and takes it
// off. The patches carry the node's resourceVersion: spec.taints is
// replaced as a whole by a merge patch, so a taint someone else changed
// meanwhile makes the patch fail (and the next pass try again) instead of
// being lost.
package taints

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// AutoTaintAnnotation marks, as NodeWright does, a node that got the taint
// because it joined after a rollout of the kind with autoTaintNewNodes:
// <prefix>/autoTaint_<taint key> = "true". A '/' in the key, which an
// annotation name cannot hold, becomes '_'.
func AutoTaintAnnotation(kind skyhookv1.RolloutKind, key string) string {
	return kind.Prefix + "/autoTaint_" + strings.ReplaceAll(key, "/", "_")
}

// AddToNew returns a change that is Add for a node that joined after a
// rollout of the kind, with the AutoTaintAnnotation mark.
func AddToNew(kind skyhookv1.RolloutKind) func(*corev1.Node, corev1.Taint) ([]byte, error) {
	return func(node *corev1.Node, taint corev1.Taint) ([]byte, error) {
		if Has(node, taint) {
			return nil, nil
		}
		return json.Marshal(map[string]any{
			"metadata": map[string]any{"resourceVersion": node.ResourceVersion, "annotations": map[string]any{AutoTaintAnnotation(kind, taint.Key): "true"}},
			"spec":     map[string]any{"taints": append(append([]corev1.Taint{}, node.Spec.Taints...), taint)},
		})
	}
}

// Has reports whether the node carries the taint (key, value and effect).
func Has(node *corev1.Node, taint corev1.Taint) bool {
	for _, t := range node.Spec.Taints {
		if t.MatchTaint(&taint) && t.Value == taint.Value {
			return true
		}
	}
	return false
}

// Add is the patch that puts the taint on the node, nil when it is there.
func Add(node *corev1.Node, taint corev1.Taint) ([]byte, error) {
	if Has(node, taint) {
		return nil, nil
	}
	return patch(node, append(append([]corev1.Taint{}, node.Spec.Taints...), taint))
}

// HasAny reports whether the node carries one of the taints.
func HasAny(node *corev1.Node, list []corev1.Taint) bool {
	for _, t := range list {
		if Has(node, t) {
			return true
		}
	}
	return false
}

// Remove is the patch that takes the taints off the node, nil when none is
// there.
func Remove(node *corev1.Node, list ...corev1.Taint) ([]byte, error) {
	kept, removed := without(node, list)
	if !removed {
		return nil, nil
	}
	return patch(node, kept)
}

// RemoveAndCordon is Remove that also cordons the node and marks the
// cordon with the annotation (NodeWright v0.19's runtimeRequiredCordonAfter:
// the node takes no workload until an admin uncordons it), in one write;
// nil when none of the taints is there.
func RemoveAndCordon(node *corev1.Node, mark string, list ...corev1.Taint) ([]byte, error) {
	kept, removed := without(node, list)
	if !removed {
		return nil, nil
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": node.ResourceVersion, "annotations": map[string]any{mark: "true"}},
		"spec":     map[string]any{"taints": kept, "unschedulable": true},
	})
}

// without is the node's taints but the listed ones, and whether any was
// there.
func without(node *corev1.Node, list []corev1.Taint) ([]corev1.Taint, bool) {
	kept := []corev1.Taint{}
	removed := false
	for _, t := range node.Spec.Taints {
		if HasAny(&corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{t}}}, list) {
			removed = true
			continue
		}
		kept = append(kept, t)
	}
	return kept, removed
}

func patch(node *corev1.Node, list []corev1.Taint) ([]byte, error) {
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": node.ResourceVersion},
		"spec":     map[string]any{"taints": list},
	})
}
