package reconcile

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/compartment"
)

// The status fields NodeWright's readers use (its scripts, dashboard and
// end-to-end suite): per-node maps, bounded so the object stays small at
// any fleet size, and a summary per compartment.

// reportNodes writes nodeState, nodeStatus, nodeBootIds, nodePriority and
// nodeOrderOffset from the pass's nodes. The nodes that need attention come
// first (erroring, blocked, in progress, waiting, complete; then by name),
// so a bound cuts the least interesting ones.
func (pass *rolloutPass) reportNodes(work []*nodeWork) {
	s := &pass.sk.Status
	ordered := make([]*nodeWork, len(work))
	copy(ordered, work)
	sort.SliceStable(ordered, func(i, j int) bool { return attentionRank(ordered[i].now) < attentionRank(ordered[j].now) })
	s.NodeState, s.NodeStatus, s.NodeBootIDs = nil, nil, nil
	for i, w := range ordered {
		if i < skyhookv1.MaxNodeStateNodes {
			if rec := w.record(); len(rec) > 0 {
				if s.NodeState == nil {
					s.NodeState = map[string]skyhookv1.NodeState{}
				}
				s.NodeState[w.node.Name] = rec
			}
		}
		if i < skyhookv1.MaxNodeStatusNodes && w.now != "" {
			if s.NodeStatus == nil {
				s.NodeStatus, s.NodeBootIDs = map[string]skyhookv1.Status{}, map[string]string{}
			}
			s.NodeStatus[w.node.Name] = w.now
			if boot := w.node.Status.NodeInfo.BootID; boot != "" {
				s.NodeBootIDs[w.node.Name] = boot
			}
		}
	}
	s.OmittedNodes = nil
	if n := len(work); n > skyhookv1.MaxNodeStateNodes {
		s.OmittedNodes = &skyhookv1.OmittedNodes{NodeState: n - skyhookv1.MaxNodeStateNodes, NodeStatus: max(0, n-skyhookv1.MaxNodeStatusNodes)}
	}
	pass.reportNodePriority(work)
}

// attentionRank orders node statuses by how much an admin wants to see them.
func attentionRank(s skyhookv1.Status) int {
	switch s {
	case skyhookv1.StatusErroring:
		return 0
	case skyhookv1.StatusBlocked:
		return 1
	case skyhookv1.StatusInProgress:
		return 2
	case skyhookv1.StatusWaiting:
		return 3
	case skyhookv1.StatusComplete:
		return 4
	}
	return 5
}

// reportNodePriority keeps, for each node in progress, when it started (the
// time already listed, else now); nodes that left it count in
// nodeOrderOffset, as NodeWright counts them.
func (pass *rolloutPass) reportNodePriority(work []*nodeWork) {
	s := &pass.sk.Status
	before := s.NodePriority
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	var next map[string]metav1.Time
	for _, w := range work {
		if w.now != skyhookv1.StatusInProgress && w.now != skyhookv1.StatusErroring {
			continue
		}
		if next == nil {
			next = map[string]metav1.Time{}
		}
		if len(next) == skyhookv1.MaxNodeStatusNodes {
			break
		}
		if t, ok := before[w.node.Name]; ok {
			next[w.node.Name] = t
		} else {
			next[w.node.Name] = now
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
	names := make([]string, 0, len(s.NodePriority))
	for name := range s.NodePriority {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		ti, tj := s.NodePriority[names[i]], s.NodePriority[names[j]]
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return names[i] < names[j]
	})
	place := make(map[string]int, len(names))
	for i, name := range names {
		place[name] = s.NodeOrderOffset + i
	}
	for _, w := range work {
		if i, ok := place[w.node.Name]; ok {
			w.order = i
		}
	}
	for i, w := range starting {
		w.order = s.NodeOrderOffset + len(names) + i
	}
}
