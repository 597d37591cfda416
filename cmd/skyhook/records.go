package main

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// nodeRecord is one rollout's record on one node: its nodeState_<name>
// annotation, read, and the key it was read from (ref).
type nodeRecord struct {
	node  *corev1.Node
	ref   skyhookv1.RolloutRef
	state skyhookv1.NodeState
}

// readRecords reads the records of the rollout named name (of every
// rollout when name is empty) on the nodes, sorted by node, then name. A
// rollout's record is under its leader's kind's keys (leaders; NodeWright's
// for a name no object has), or else under the other kind's, where the
// operator has not moved it from yet (reconcile/twins.go). A record that
// cannot be read is left out, with a warning under -v.
func readRecords(cmd *cobra.Command, nodes []*corev1.Node, name string, leaders map[string]skyhookv1.RolloutKind) []nodeRecord {
	var out []nodeRecord
	for _, n := range nodes {
		for _, ref := range recordsOn(n, leaders) {
			if name != "" && ref.Name != name {
				continue
			}
			state, err := decodeState(n.Annotations[ref.NodeStateAnnotation()])
			if err != nil {
				if name == "" {
					warnf(cmd, "skipping node %q skyhook %q - invalid annotation: %v", n.Name, ref.Name, err)
				} else {
					warnf(cmd, "skipping node %q - invalid annotation: %v", n.Name, err)
				}
				continue
			}
			out = append(out, nodeRecord{node: n, ref: ref, state: state})
		}
	}
	slices.SortStableFunc(out, func(a, b nodeRecord) int {
		return strings.Compare(a.node.Name+"\x00"+a.ref.Name, b.node.Name+"\x00"+b.ref.Name)
	})
	return out
}

// recordsOn are the records on the node, one per rollout name (see
// readRecords for which key), sorted by name.
func recordsOn(n *corev1.Node, leaders map[string]skyhookv1.RolloutKind) []skyhookv1.RolloutRef {
	kinds := map[string][]skyhookv1.RolloutKind{}
	for k := range n.Annotations {
		if ref, ok := skyhookv1.RecordOf(k); ok {
			kinds[ref.Name] = append(kinds[ref.Name], ref.Kind)
		}
	}
	var out []skyhookv1.RolloutRef
	for _, name := range slices.Sorted(maps.Keys(kinds)) {
		out = append(out, recordKind(name, kinds[name], leaders).Named(name))
	}
	return out
}

// recordKind is, of the kinds with a record of the name on a node, the one
// the rollout reads: its leader's, else the one there.
func recordKind(name string, present []skyhookv1.RolloutKind, leaders map[string]skyhookv1.RolloutKind) skyhookv1.RolloutKind {
	preferred, ok := leaders[name]
	if !ok {
		preferred = skyhookv1.NodeWrights
	}
	for _, k := range present {
		if k.Kind == preferred.Kind {
			return k
		}
	}
	return present[0]
}

// recordKindOn is the kind whose record of the rollout a node holds, by
// recordKind; ok is false when it holds none.
func recordKindOn(n *corev1.Node, name string, leaders map[string]skyhookv1.RolloutKind) (skyhookv1.RolloutKind, bool) {
	var present []skyhookv1.RolloutKind
	for _, k := range skyhookv1.RolloutKinds {
		if _, ok := n.Annotations[k.Named(name).NodeStateAnnotation()]; ok {
			present = append(present, k)
		}
	}
	if len(present) == 0 {
		return skyhookv1.RolloutKind{}, false
	}
	return recordKind(name, present, leaders), true
}

func decodeState(raw string) (skyhookv1.NodeState, error) {
	state := skyhookv1.NodeState{}
	if raw == "" {
		return state, nil
	}
	err := json.Unmarshal([]byte(raw), &state)
	return state, err
}

// packages are the record's entries sorted by package name, then version.
func (r nodeRecord) packages() []skyhookv1.PackageStatus {
	var out []skyhookv1.PackageStatus
	for _, k := range slices.Sorted(maps.Keys(r.state)) {
		out = append(out, r.state[k])
	}
	return out
}

// summary is the node's status for the rollout as NodeWright's plugin
// derives it from the record: erroring when a package is, complete when
// all are, in_progress when one is in progress or complete, else unknown;
// with the number of complete packages and the restarts of all.
func (r nodeRecord) summary() (status string, complete int, restarts int32) {
	erroring, started := false, false
	for _, p := range r.state {
		restarts += p.Restarts
		switch p.State {
		case skyhookv1.StateComplete:
			complete++
		case skyhookv1.StateErroring:
			erroring = true
		case skyhookv1.StateInProgress:
			started = true
		}
	}
	switch {
	case erroring:
		return string(skyhookv1.StateErroring), complete, restarts
	case len(r.state) > 0 && complete == len(r.state):
		return string(skyhookv1.StateComplete), complete, restarts
	case started || complete > 0:
		return string(skyhookv1.StateInProgress), complete, restarts
	}
	return string(skyhookv1.StateUnknown), complete, restarts
}

// runtimeRequiredCordon reports whether the node carries a runtime-required
// cordon's annotation, under either kind's prefix.
func runtimeRequiredCordon(n *corev1.Node) bool {
	for _, k := range skyhookv1.RolloutKinds {
		if _, ok := n.Annotations[k.RuntimeRequiredCordonAnnotation()]; ok {
			return true
		}
	}
	return false
}

// pointers are the nodes of a list, for readRecords.
func pointers(nodes []corev1.Node) []*corev1.Node {
	out := make([]*corev1.Node, len(nodes))
	for i := range nodes {
		out[i] = &nodes[i]
	}
	return out
}

// nodeNames are the names of the nodes.
func nodeNames(nodes []corev1.Node) []string {
	out := make([]string, len(nodes))
	for i := range nodes {
		out[i] = nodes[i].Name
	}
	return out
}

// selectNodes are the nodes the patterns select, sorted by name.
func selectNodes(nodes []corev1.Node, patterns []string) ([]*corev1.Node, error) {
	names, err := matchNodes(patterns, nodeNames(nodes))
	if err != nil {
		return nil, err
	}
	var out []*corev1.Node
	for _, name := range names {
		for i := range nodes {
			if nodes[i].Name == name {
				out = append(out, &nodes[i])
			}
		}
	}
	return out, nil
}

// writeState writes the node's record under key (nil state: the
// annotation goes), only if the record is still as it was read: a record
// changed meanwhile (by the operator) is not overwritten, and the write
// fails. The write is conditional on the node's resourceVersion, and a
// conflict caused by anything else on the node (a kubelet's heartbeat, a
// taint) is retried against the node as it now is.
func writeState(cmd *cobra.Command, c client.Client, n *corev1.Node, key string, state skyhookv1.NodeState) error {
	value := any(nil)
	if len(state) > 0 {
		encoded, err := json.Marshal(state)
		if err != nil {
			return err
		}
		value = string(encoded)
	}
	read, wasThere := n.Annotations[key]
	version := n.ResourceVersion
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": version, "annotations": map[string]any{key: value}}})
		if err != nil {
			return err
		}
		err = c.Patch(cmd.Context(), &corev1.Node{ObjectMeta: objectMeta(n.Name)}, client.RawPatch(types.MergePatchType, patch), withDryRun(cmd)...)
		if !apierrors.IsConflict(err) {
			return err
		}
		var now corev1.Node
		if getErr := c.Get(cmd.Context(), client.ObjectKey{Name: n.Name}, &now); getErr != nil {
			return getErr
		}
		if record, there := now.Annotations[key]; there != wasThere || record != read {
			return errRecordChanged
		}
		version = now.ResourceVersion
		return err
	})
}

// errRecordChanged is writeState's refusal to overwrite a record changed
// since it was read.
var errRecordChanged = errors.New("the record on the node changed since it was read; nothing written, run the command again")

// stageNames are the stages --stage takes.
const stageNames = "apply, config, upgrade, interrupt, post-interrupt, uninstall"

// validStage reports whether s names a stage --stage takes.
func validStage(s string) bool {
	return slices.Contains([]skyhookv1.Stage{skyhookv1.StageApply, skyhookv1.StageConfig, skyhookv1.StageUpgrade,
		skyhookv1.StageInterrupt, skyhookv1.StagePostInterrupt, skyhookv1.StageUninstall}, skyhookv1.Stage(s))
}
