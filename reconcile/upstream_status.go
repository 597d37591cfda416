package reconcile

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/compartment"
	"github.com/skyhook-go/skyhook/reconcile/fleet"
)

// The status fields NodeWright's readers use (its scripts, dashboard and
// end-to-end suite): per-node maps, bounded so the object stays small at
// any fleet size, and a summary per compartment.

// reportNodes writes nodeState, nodeStatus, nodeBootIds, nodePriority and
// nodeOrderOffset from the view. The nodes that need attention come first
// (erroring, blocked, in progress, waiting, complete; then by name), so a
// bound cuts the least interesting ones; only the nodes within the bounds
// are read.
func (pass *rolloutPass) reportNodes(view *fleetView) {
	s := &pass.sk.Status
	s.NodeState, s.NodeStatus, s.NodeBootIDs = nil, nil, nil
	listed := min(view.index.Len(fleet.Work), skyhookv1.MaxNodeStatusNodes)
	i := 0
	view.byAttention(func(w *nodeWork) bool {
		if i < skyhookv1.MaxNodeStateNodes {
			if rec := w.record(); len(rec) > 0 {
				if s.NodeState == nil {
					s.NodeState = make(map[string]skyhookv1.NodeState, min(listed, skyhookv1.MaxNodeStateNodes))
				}
				s.NodeState[w.node.Name] = rec
			}
		}
		if s.NodeStatus == nil {
			s.NodeStatus, s.NodeBootIDs = make(map[string]skyhookv1.Status, listed), make(map[string]string, listed)
		}
		s.NodeStatus[w.node.Name] = w.now
		if boot := w.node.Status.NodeInfo.BootID; boot != "" {
			s.NodeBootIDs[w.node.Name] = boot
		}
		i++
		return i < skyhookv1.MaxNodeStatusNodes
	})
	s.OmittedNodes = nil
	if n := view.index.Len(fleet.Work); n > skyhookv1.MaxNodeStateNodes {
		s.OmittedNodes = &skyhookv1.OmittedNodes{NodeState: n - skyhookv1.MaxNodeStateNodes, NodeStatus: max(0, n-skyhookv1.MaxNodeStatusNodes)}
	}
	pass.reportNodePriority(view)
}

// reportNodePriority keeps, for each node in progress, when it started (the
// time already listed, else now); nodes that left it count in
// nodeOrderOffset, as NodeWright counts them.
func (pass *rolloutPass) reportNodePriority(view *fleetView) {
	s := &pass.sk.Status
	before := s.NodePriority
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	var started []string
	for _, status := range []skyhookv1.Status{skyhookv1.StatusInProgress, skyhookv1.StatusErroring} {
		view.index.Ascend(status, func(name string) bool {
			started = append(started, name)
			return true
		})
	}
	sort.Strings(started)
	var next map[string]metav1.Time
	for _, name := range started[:min(len(started), skyhookv1.MaxNodeStatusNodes)] {
		if next == nil {
			next = map[string]metav1.Time{}
		}
		if t, ok := before[name]; ok {
			next[name] = t
		} else {
			next[name] = now
		}
	}
	for name := range before {
		if _, still := next[name]; !still {
			s.NodeOrderOffset++
		}
	}
	s.NodePriority = next
}

// compartmentStatuses is NodeWright's summary per compartment: from the
// policy's compartments, or for a Skyhook with a budget one __default__
// compartment of all its nodes.
func compartmentStatuses(o policyOutcome, p progress, capacity int) map[string]skyhookv1.CompartmentProgress {
	if o.compartments == nil {
		return map[string]skyhookv1.CompartmentProgress{skyhookv1.DefaultCompartmentName: progressOf(p.selected, p.complete, p.active, capacity, nil)}
	}
	out := make(map[string]skyhookv1.CompartmentProgress, len(o.compartments))
	for _, c := range o.compartments {
		batch := &skyhookv1.BatchProgress{CurrentBatch: compartment.CurrentBatch(c), LastBatchSize: int(c.BatchSize), CompletedNodes: int(c.Complete),
			FailedNodes: int(c.Erroring), ConsecutiveFailures: int(c.ConsecutiveFailures), LastBatchFailed: c.ConsecutiveFailures > 0, ShouldStop: c.Halted}
		out[c.Name] = progressOf(int(c.Nodes), int(c.Complete), int(c.InProgress), o.ceilings[c.Name], batch)
	}
	return out
}

func progressOf(matched, completed, inProgress, ceiling int, batch *skyhookv1.BatchProgress) skyhookv1.CompartmentProgress {
	percent := 100
	if matched > 0 {
		percent = completed * 100 / matched
	}
	return skyhookv1.CompartmentProgress{Matched: matched, Ceiling: min(ceiling, matched), InProgress: inProgress, Completed: completed,
		ProgressPercent: percent, BatchState: batch}
}

// orderNodes gives each node its place in the rollout as NodeWright's
// SKYHOOK_NODE_ORDER counts it: nodeOrderOffset plus the node's place in
// nodePriority (by start time, then name) for the nodes already started;
// the nodes starting in this pass (starting, in the order they start) come
// after them. Both stay put as earlier nodes finish: the offset grows by
// the nodes that leave nodePriority.
func orderNodes(s *skyhookv1.SkyhookStatus, work, starting []*nodeWork) {
	for i, w := range starting {
		w.order = s.NodeOrderOffset + len(s.NodePriority) + i
	}
	if len(work) == 0 {
		return
	}
	// A node's place is how many listed nodes started before it: counted
	// for a few nodes (a pass that visits a few), from a sort for many.
	before := func(a, b string) bool {
		ta, tb := s.NodePriority[a], s.NodePriority[b]
		if !ta.Equal(&tb) {
			return ta.Before(&tb)
		}
		return a < b
	}
	if len(work)*16 < len(s.NodePriority) {
		for _, w := range work {
			if _, listed := s.NodePriority[w.node.Name]; !listed {
				continue
			}
			place := 0
			for other := range s.NodePriority {
				if before(other, w.node.Name) {
					place++
				}
			}
			w.order = s.NodeOrderOffset + place
		}
		return
	}
	names := make([]string, 0, len(s.NodePriority))
	for name := range s.NodePriority {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return before(names[i], names[j]) })
	place := make(map[string]int, len(names))
	for i, name := range names {
		place[name] = s.NodeOrderOffset + i
	}
	for _, w := range work {
		if i, ok := place[w.node.Name]; ok {
			w.order = i
		}
	}
}
