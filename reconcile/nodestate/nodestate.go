// Package nodestate reads and writes a Skyhook's per-node record, kept on
// the Node in the reference system's format: the annotation
// skyhook.nvidia.com/nodeState_<skyhook> (JSON map "name|version" →
// {name, version, image, stage, state, restarts}) and the label and
// annotation skyhook.nvidia.com/status_<skyhook>.
package nodestate

import (
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Read returns the skyhook's record on node; an absent annotation is an
// empty record.
func Read(node *corev1.Node, skyhook string) (skyhookv1.NodeState, error) {
	raw, ok := node.Annotations[skyhookv1.NodeStateAnnotation(skyhook)]
	state := skyhookv1.NodeState{}
	if !ok || raw == "" {
		return state, nil
	}
	if err := json.Unmarshal([]byte(raw), &state); err != nil {
		return skyhookv1.NodeState{}, fmt.Errorf("node %s: annotation %s: %w", node.Name, skyhookv1.NodeStateAnnotation(skyhook), err)
	}
	return state, nil
}

// Patch is the merge patch that records state and status for skyhook on a
// node, or nil when the node already says exactly that (no write when
// nothing changed).
func Patch(node *corev1.Node, skyhook string, state skyhookv1.NodeState, status skyhookv1.Status) ([]byte, error) {
	current, err := Read(node, skyhook)
	key := skyhookv1.StatusKey(skyhook)
	if err == nil && maps.Equal(current, state) &&
		node.Labels[key] == string(status) && node.Annotations[key] == string(status) {
		return nil, nil
	}
	encoded, err := json.Marshal(state)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]any{key: string(status)},
		"annotations": map[string]any{key: string(status), skyhookv1.NodeStateAnnotation(skyhook): string(encoded)},
	}})
}

// Forget is the merge patch that removes skyhook's record from a node, or
// nil when there is none.
func Forget(node *corev1.Node, skyhook string) ([]byte, error) {
	key := skyhookv1.StatusKey(skyhook)
	_, hasState := node.Annotations[skyhookv1.NodeStateAnnotation(skyhook)]
	_, hasLabel := node.Labels[key]
	_, hasStatus := node.Annotations[key]
	if !hasState && !hasLabel && !hasStatus {
		return nil, nil
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]any{key: nil},
		"annotations": map[string]any{key: nil, skyhookv1.NodeStateAnnotation(skyhook): nil},
	}})
}
