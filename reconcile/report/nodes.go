package report

import (
	"iter"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// The status fields NodeWright's readers use per node (its scripts,
// dashboard and end-to-end suite), bounded so the object stays small at
// any fleet size, and the node order it hands to stage pods.

// NodeEntry is one node as the status maps show it.
type NodeEntry struct {
	Name   string
	Status skyhookv1.Status
	// State is the node's record of the Skyhook.
	State  skyhookv1.NodeState
	BootID string
}

// NodeMaps writes nodeState, nodeStatus, nodeBootIds and omittedNodes.
// nodes yields the nodes an admin most wants to see first (erroring,
// blocked, in progress, waiting, complete; then by name), so the bounds
// cut the least interesting ones; it is read no further than the bounds.
// total is how many nodes there are.
func NodeMaps(s *skyhookv1.SkyhookStatus, total int, nodes iter.Seq[NodeEntry]) {
	s.NodeState, s.NodeStatus, s.NodeBootIDs = nil, nil, nil
	listed := min(total, skyhookv1.MaxNodeStatusNodes)
	i := 0
	for n := range nodes {
		if i < skyhookv1.MaxNodeStateNodes && len(n.State) > 0 {
			if s.NodeState == nil {
				s.NodeState = make(map[string]skyhookv1.NodeState, min(listed, skyhookv1.MaxNodeStateNodes))
			}
			s.NodeState[n.Name] = n.State
		}
		if s.NodeStatus == nil {
			s.NodeStatus, s.NodeBootIDs = make(map[string]skyhookv1.Status, listed), make(map[string]string, listed)
		}
		s.NodeStatus[n.Name] = n.Status
		if n.BootID != "" {
			s.NodeBootIDs[n.Name] = n.BootID
		}
		if i++; i >= skyhookv1.MaxNodeStatusNodes {
			break
		}
	}
	s.OmittedNodes = nil
	if total > skyhookv1.MaxNodeStateNodes {
		s.OmittedNodes = &skyhookv1.OmittedNodes{NodeState: total - skyhookv1.MaxNodeStateNodes, NodeStatus: max(0, total-skyhookv1.MaxNodeStatusNodes)}
	}
}

// NodePriority keeps, for each started node (in progress or erroring), when
// it started: the time already listed, else now; nodes that left it count
// in nodeOrderOffset, as NodeWright counts them. It sorts started.
func NodePriority(s *skyhookv1.SkyhookStatus, started []string, now time.Time) {
	before := s.NodePriority
	at := metav1.NewTime(now.UTC().Truncate(time.Second))
	sort.Strings(started)
	var next map[string]metav1.Time
	for _, name := range started[:min(len(started), skyhookv1.MaxNodeStatusNodes)] {
		if next == nil {
			next = map[string]metav1.Time{}
		}
		if t, ok := before[name]; ok {
			next[name] = t
		} else {
			next[name] = at
		}
	}
	for name := range before {
		if _, still := next[name]; !still {
			s.NodeOrderOffset++
		}
	}
	s.NodePriority = next
}

// Places gives each node its place in the rollout as NodeWright's
// SKYHOOK_NODE_ORDER counts it: nodeOrderOffset plus the node's place in
// nodePriority (by start time, then name); -1 for a node not listed there.
// A node keeps its place as earlier nodes finish: the offset grows by the
// nodes that leave nodePriority.
func Places(s *skyhookv1.SkyhookStatus, names []string) []int {
	places := make([]int, len(names))
	before := func(a, b string) bool {
		ta, tb := s.NodePriority[a], s.NodePriority[b]
		if !ta.Equal(&tb) {
			return ta.Before(&tb)
		}
		return a < b
	}
	// A node's place is how many listed nodes started before it: counted
	// for a few nodes (a pass that visits a few), from a sort for many.
	if len(names)*16 < len(s.NodePriority) {
		for i, name := range names {
			places[i] = -1
			if _, listed := s.NodePriority[name]; !listed {
				continue
			}
			place := 0
			for other := range s.NodePriority {
				if before(other, name) {
					place++
				}
			}
			places[i] = s.NodeOrderOffset + place
		}
		return places
	}
	listed := make([]string, 0, len(s.NodePriority))
	for name := range s.NodePriority {
		listed = append(listed, name)
	}
	sort.Slice(listed, func(i, j int) bool { return before(listed[i], listed[j]) })
	place := make(map[string]int, len(listed))
	for i, name := range listed {
		place[name] = s.NodeOrderOffset + i
	}
	for i, name := range names {
		if p, ok := place[name]; ok {
			places[i] = p
		} else {
			places[i] = -1
		}
	}
	return places
}

// NextPlace is the place of the first node that starts in this pass: after
// every node listed in nodePriority.
func NextPlace(s *skyhookv1.SkyhookStatus) int { return s.NodeOrderOffset + len(s.NodePriority) }
