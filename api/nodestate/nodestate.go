// Package nodestate reads and writes a rollout's per-node record, kept on
// the Node in the reference system's format, under the prefix of the
// rollout's kind (skyhook.nvidia.com/ for a Skyhook, nodewright.nvidia.com/
// for a NodeWright): the annotation <prefix>/nodeState_<name> (JSON map
// "name|version" → {name, version, image, stage, state, restarts}) and the
// label and annotation <prefix>/status_<name>; and this project's own
// annotations beside them: config_<name> (configMap hashes) and
// batch_<name> (the DeploymentPolicy batch the node started in).
package nodestate

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Read returns the rollout's record on node; an absent annotation is an
// empty record.
func Read(node *corev1.Node, rollout skyhookv1.RolloutRef) (skyhookv1.NodeState, error) {
	raw, ok := node.Annotations[rollout.NodeStateAnnotation()]
	state := skyhookv1.NodeState{}
	if !ok || raw == "" {
		return state, nil
	}
	if err := json.Unmarshal([]byte(raw), &state); err != nil {
		return skyhookv1.NodeState{}, fmt.Errorf("node %s: annotation %s: %w", node.Name, rollout.NodeStateAnnotation(), err)
	}
	if state == nil { // "null": no record, and not the empty one, which would start the node over
		return skyhookv1.NodeState{}, fmt.Errorf("node %s: annotation %s: null is not a record", node.Name, rollout.NodeStateAnnotation())
	}
	return state, nil
}

// ReadConfig returns the configMap hashes the rollout's packages' config
// stages last ran with on node (package → hash).
func ReadConfig(node *corev1.Node, rollout skyhookv1.RolloutRef) map[string]string {
	hashes := map[string]string{}
	if raw := node.Annotations[rollout.ConfigAnnotation()]; raw != "" {
		if json.Unmarshal([]byte(raw), &hashes) != nil || hashes == nil {
			// A broken record ("null" too) only reruns nothing; the
			// callers write into the map, so never nil.
			return map[string]string{}
		}
	}
	return hashes
}

// ReadBatch returns the DeploymentPolicy batch the node last started in for
// the rollout, 0 when none (or unreadable: the node then belongs to no batch).
func ReadBatch(node *corev1.Node, rollout skyhookv1.RolloutRef) int32 {
	n, err := strconv.ParseInt(node.Annotations[rollout.BatchAnnotation()], 10, 32)
	if err != nil || n < 0 {
		return 0
	}
	return int32(n)
}

// Problems describes the rollout's config_ and batch_ annotations on node
// that do not read as what this operator writes there (someone else wrote
// them): each is read as none (ReadConfig, ReadBatch), and the next Patch
// of the node's record rewrites it.
func Problems(node *corev1.Node, rollout skyhookv1.RolloutRef) []string {
	var problems []string
	if raw, ok := node.Annotations[rollout.ConfigAnnotation()]; ok && canonicalConfig(raw) != raw {
		problems = append(problems, fmt.Sprintf("annotation %s holds %s, not a JSON object of package to configMap hash as this operator writes it; read as %s",
			rollout.ConfigAnnotation(), clip(raw), orNone(canonicalConfig(raw))))
	}
	if raw, ok := node.Annotations[rollout.BatchAnnotation()]; ok && canonicalBatch(raw) != raw {
		problems = append(problems, fmt.Sprintf("annotation %s holds %s, not a batch number as this operator writes it; read as %s",
			rollout.BatchAnnotation(), clip(raw), orNone(canonicalBatch(raw))))
	}
	return problems
}

// canonicalConfig is the config annotation this operator would write for
// what raw reads as ("" for none).
func canonicalConfig(raw string) string {
	var hashes map[string]string
	if json.Unmarshal([]byte(raw), &hashes) != nil || len(hashes) == 0 {
		return ""
	}
	encoded, _ := json.Marshal(hashes) // strings only: cannot fail
	return string(encoded)
}

// canonicalBatch is the batch annotation this operator would write for
// what raw reads as ("" for none).
func canonicalBatch(raw string) string {
	n, err := strconv.ParseInt(raw, 10, 32)
	if err != nil || n <= 0 {
		return ""
	}
	return strconv.Itoa(int(n))
}

func orNone(canonical string) string {
	if canonical == "" {
		return "none"
	}
	return canonical
}

// clip quotes at most 64 bytes of a value for a message.
func clip(raw string) string {
	if len(raw) > 64 {
		return fmt.Sprintf("%q... (%d bytes)", raw[:64], len(raw))
	}
	return fmt.Sprintf("%q", raw)
}

// Record is everything a Skyhook keeps on one node.
type Record struct {
	// State is the per-package record (the nodeState annotation).
	State skyhookv1.NodeState
	// Config maps a package to the hash of the configMap its config stage
	// last ran with.
	Config map[string]string
	// Status is the node's summary status (label and annotation).
	Status skyhookv1.Status
	// Batch is the DeploymentPolicy batch the node last started in; 0 for
	// none.
	Batch int32
	// Interrupt is the node's interrupt in progress (the encoded
	// interrupt.Record), empty for none.
	Interrupt string
	// Version is the operator's version, written to version_<name> as
	// NodeWright does; empty leaves the annotation as it is.
	Version string
	// DrainStart and DrainBlocked are NodeWright's drainStart_ and
	// drainBlocked_ annotations while a drain of the node lasts (when it
	// began, RFC 3339; the pods that block it, JSON); empty removes them.
	DrainStart, DrainBlocked string
	// BootID is the node's boot ID the rollout acknowledges (bootID_);
	// empty leaves the annotation as it is.
	BootID string
}

// Patch is the merge patch that writes rec for the rollout on a node, or nil
// when the node already says exactly that (no write when nothing changed).
func Patch(node *corev1.Node, rollout skyhookv1.RolloutRef, rec Record) ([]byte, error) {
	current, err := Read(node, rollout)
	key := rollout.StatusKey()
	if err == nil && maps.Equal(current, rec.State) && maps.Equal(ReadConfig(node, rollout), rec.Config) &&
		node.Labels[key] == string(rec.Status) && node.Annotations[key] == string(rec.Status) && ReadBatch(node, rollout) == rec.Batch &&
		len(Problems(node, rollout)) == 0 && // a value someone else wrote is rewritten
		node.Annotations[rollout.InterruptAnnotation()] == rec.Interrupt &&
		node.Annotations[rollout.DrainStartAnnotation()] == rec.DrainStart && node.Annotations[rollout.DrainBlockedAnnotation()] == rec.DrainBlocked &&
		(rec.Version == "" || node.Annotations[rollout.VersionAnnotation()] == rec.Version) &&
		(rec.BootID == "" || node.Annotations[rollout.BootIDAnnotation()] == rec.BootID) {
		return nil, nil
	}
	encoded, err := json.Marshal(rec.State)
	if err != nil {
		return nil, err
	}
	annotations := map[string]any{key: string(rec.Status), rollout.NodeStateAnnotation(): string(encoded),
		rollout.ConfigAnnotation(): nil, rollout.BatchAnnotation(): nil, rollout.InterruptAnnotation(): nil}
	if rec.Version != "" {
		annotations[rollout.VersionAnnotation()] = rec.Version
	}
	if rec.BootID != "" {
		annotations[rollout.BootIDAnnotation()] = rec.BootID
	}
	if len(rec.Config) > 0 {
		hashes, err := json.Marshal(rec.Config)
		if err != nil {
			return nil, err
		}
		annotations[rollout.ConfigAnnotation()] = string(hashes)
	}
	if rec.Batch > 0 {
		annotations[rollout.BatchAnnotation()] = strconv.Itoa(int(rec.Batch))
	}
	if rec.Interrupt != "" {
		annotations[rollout.InterruptAnnotation()] = rec.Interrupt
	}
	annotations[rollout.DrainStartAnnotation()], annotations[rollout.DrainBlockedAnnotation()] = orRemove(rec.DrainStart), orRemove(rec.DrainBlocked)
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]any{key: string(rec.Status)},
		"annotations": annotations,
	}})
}

// orRemove is a merge patch's value: the string, or null to remove the key.
func orRemove(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// Forget is the merge patch that removes the rollout's record from a node, or
// nil when there is none.
func Forget(node *corev1.Node, rollout skyhookv1.RolloutRef) ([]byte, error) {
	return ForgetKeeping(node, rollout, nil)
}

// ForgetKeeping is Forget, except that the package entries in kept stay in
// the node's nodeState annotation (as NodeWright leaves the records of
// packages a deleted Skyhook did not uninstall: their files may still be on
// the host).
func ForgetKeeping(node *corev1.Node, rollout skyhookv1.RolloutRef, kept skyhookv1.NodeState) ([]byte, error) {
	key := rollout.StatusKey()
	_, hasState := node.Annotations[rollout.NodeStateAnnotation()]
	_, hasLabel := node.Labels[key]
	_, hasStatus := node.Annotations[key]
	_, hasBatch := node.Annotations[rollout.BatchAnnotation()]
	_, hasInterrupt := node.Annotations[rollout.InterruptAnnotation()]
	_, hasVersion := node.Annotations[rollout.VersionAnnotation()]
	_, hasDrainStart := node.Annotations[rollout.DrainStartAnnotation()]
	_, hasDrainBlocked := node.Annotations[rollout.DrainBlockedAnnotation()]
	_, hasBootID := node.Annotations[rollout.BootIDAnnotation()]
	if !hasState && !hasLabel && !hasStatus && !hasBatch && !hasInterrupt && !hasVersion && !hasDrainStart && !hasDrainBlocked && !hasBootID {
		return nil, nil
	}
	var state any // nil removes the annotation
	if len(kept) > 0 {
		encoded, err := json.Marshal(kept)
		if err != nil {
			return nil, err
		}
		state = string(encoded)
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"labels": map[string]any{key: nil},
		"annotations": map[string]any{key: nil, rollout.NodeStateAnnotation(): state,
			rollout.ConfigAnnotation(): nil, rollout.BatchAnnotation(): nil, rollout.InterruptAnnotation(): nil,
			rollout.VersionAnnotation(): nil, rollout.DrainStartAnnotation(): nil, rollout.DrainBlockedAnnotation(): nil,
			rollout.BootIDAnnotation(): nil},
	}})
}

// RebootReset is the merge patch that starts the rollout over on a node
// that rebooted (REAPPLY_ON_REBOOT), as NodeWright resets it: the package
// entries, the status and the config hashes go, so that every package is
// applied again; the boot ID is acknowledged in the same write. The batch,
// the version and a cordon stay (NodeWright v0.20 keeps cordon_).
func RebootReset(rollout skyhookv1.RolloutRef, bootID string) []byte {
	key := rollout.StatusKey()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{ // strings and nulls only: cannot fail
		"labels": map[string]any{key: nil},
		"annotations": map[string]any{key: nil, rollout.NodeStateAnnotation(): nil, rollout.ConfigAnnotation(): nil,
			rollout.InterruptAnnotation(): nil, rollout.DrainStartAnnotation(): nil, rollout.DrainBlockedAnnotation(): nil,
			rollout.BootIDAnnotation(): bootID},
	}})
	return patch
}

// AcknowledgeBoot is the merge patch that records the node's boot ID as the
// rollout's acknowledged one, nil when the node says it already.
func AcknowledgeBoot(node *corev1.Node, rollout skyhookv1.RolloutRef, bootID string) []byte {
	if node.Annotations[rollout.BootIDAnnotation()] == bootID {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{rollout.BootIDAnnotation(): bootID}}})
	return patch
}

// StatusPatch is the merge patch that sets only the Skyhook's status label
// and annotation on a node (NodeWright's marks for a node no stage runs
// on: disabled, paused, waiting, blocked), or nil when both say it
// already. The record itself is left as it is, and none is created.
func StatusPatch(node *corev1.Node, rollout skyhookv1.RolloutRef, status skyhookv1.Status) []byte {
	key := rollout.StatusKey()
	if node.Labels[key] == string(status) && node.Annotations[key] == string(status) {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{ // strings only: cannot fail
		"labels": map[string]string{key: string(status)}, "annotations": map[string]string{key: string(status)}}})
	return patch
}
