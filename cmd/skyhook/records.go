package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// nodeRecord is one Skyhook's record on one node: its nodeState_<skyhook>
// annotation, read.
type nodeRecord struct {
	node    *corev1.Node
	skyhook string
	state   skyhookv1.NodeState
}

// readRecords reads the records of the Skyhook (of every Skyhook when
// skyhook is empty) on the nodes, sorted by node, then Skyhook. A record
// that cannot be read is left out, with a warning under -v.
func readRecords(cmd *cobra.Command, nodes []*corev1.Node, skyhook string) []nodeRecord {
	var out []nodeRecord
	for _, n := range nodes {
		for _, sk := range skyhooksRecordedOn(n) {
			if skyhook != "" && sk != skyhook {
				continue
			}
			state, err := decodeState(n.Annotations[skyhookv1.NodeStateAnnotation(sk)])
			if err != nil {
				if skyhook == "" {
					warnf(cmd, "skipping node %q skyhook %q - invalid annotation: %v", n.Name, sk, err)
				} else {
					warnf(cmd, "skipping node %q - invalid annotation: %v", n.Name, err)
				}
				continue
			}
			out = append(out, nodeRecord{node: n, skyhook: sk, state: state})
		}
	}
	slices.SortStableFunc(out, func(a, b nodeRecord) int {
		return strings.Compare(a.node.Name+"\x00"+a.skyhook, b.node.Name+"\x00"+b.skyhook)
	})
	return out
}

// skyhooksRecordedOn are the Skyhooks with a nodeState annotation on the
// node, sorted.
func skyhooksRecordedOn(n *corev1.Node) []string {
	var out []string
	for k := range n.Annotations {
		if sk, ok := strings.CutPrefix(k, skyhookv1.NodeStatePrefix); ok {
			out = append(out, sk)
		}
	}
	slices.Sort(out)
	return out
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

// summary is the node's status for the Skyhook as NodeWright's plugin
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

// stageNames are the stages --stage takes.
const stageNames = "apply, config, upgrade, interrupt, post-interrupt, uninstall"

// validStage reports whether s names a stage --stage takes.
func validStage(s string) bool {
	return slices.Contains([]skyhookv1.Stage{skyhookv1.StageApply, skyhookv1.StageConfig, skyhookv1.StageUpgrade,
		skyhookv1.StageInterrupt, skyhookv1.StagePostInterrupt, skyhookv1.StageUninstall}, skyhookv1.Stage(s))
}
