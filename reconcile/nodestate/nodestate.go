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

// ReadConfig returns the configMap hashes the skyhook's packages' config
// stages last ran with on node (package → hash).
func ReadConfig(node *corev1.Node, skyhook string) map[string]string {
	hashes := map[string]string{}
	if raw := node.Annotations[skyhookv1.ConfigAnnotation(skyhook)]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &hashes) // a broken record only reruns nothing
	}
	return hashes
}

// Patch is the merge patch that records state, configMap hashes and status
// for skyhook on a node, or nil when the node already says exactly that (no
// write when nothing changed).
func Patch(node *corev1.Node, skyhook string, state skyhookv1.NodeState, config map[string]string, status skyhookv1.Status) ([]byte, error) {
	current, err := Read(node, skyhook)
	key := skyhookv1.StatusKey(skyhook)
	if err == nil && maps.Equal(current, state) && maps.Equal(ReadConfig(node, skyhook), config) &&
		node.Labels[key] == string(status) && node.Annotations[key] == string(status) {
		return nil, nil
	}
	encoded, err := json.Marshal(state)
	if err != nil {
		return nil, err
	}
	annotations := map[string]any{key: string(status), skyhookv1.NodeStateAnnotation(skyhook): string(encoded)}
	if len(config) > 0 {
		hashes, err := json.Marshal(config)
		if err != nil {
			return nil, err
		}
		annotations[skyhookv1.ConfigAnnotation(skyhook)] = string(hashes)
	} else {
		annotations[skyhookv1.ConfigAnnotation(skyhook)] = nil
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]any{key: string(status)},
		"annotations": annotations,
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
		"annotations": map[string]any{key: nil, skyhookv1.NodeStateAnnotation(skyhook): nil, skyhookv1.ConfigAnnotation(skyhook): nil},
	}})
}
