package report

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// The maps keep the first nodes they are given, within their bounds, read
// no further, and count the rest.
func TestNodeMapsKeepTheFirstNodesWithinTheBounds(t *testing.T) {
	const total = skyhookv1.MaxNodeStatusNodes + 500
	read := 0
	nodes := func(yield func(NodeEntry) bool) {
		for i := range total {
			read++
			e := NodeEntry{Name: fmt.Sprintf("node-%05d", i), Status: skyhookv1.StatusComplete, BootID: fmt.Sprint("boot-", i)}
			if i%2 == 0 {
				e.State = skyhookv1.NodeState{"a|1": {Name: "a", Version: "1"}}
			}
			if !yield(e) {
				return
			}
		}
	}
	var s skyhookv1.SkyhookStatus
	NodeMaps(&s, total, nodes)
	if read != skyhookv1.MaxNodeStatusNodes {
		t.Errorf("read %d nodes, want no more than the bound %d", read, skyhookv1.MaxNodeStatusNodes)
	}
	if len(s.NodeStatus) != skyhookv1.MaxNodeStatusNodes || len(s.NodeBootIDs) != skyhookv1.MaxNodeStatusNodes {
		t.Errorf("nodeStatus %d, nodeBootIds %d; want %d each", len(s.NodeStatus), len(s.NodeBootIDs), skyhookv1.MaxNodeStatusNodes)
	}
	if len(s.NodeState) != skyhookv1.MaxNodeStateNodes/2 { // of the first MaxNodeStateNodes, those with a record
		t.Errorf("nodeState lists %d nodes, want %d", len(s.NodeState), skyhookv1.MaxNodeStateNodes/2)
	}
	if _, ok := s.NodeState["node-00000"]; !ok {
		t.Error("the first node with a record is left out of nodeState")
	}
	if o := s.OmittedNodes; o == nil || o.NodeState != total-skyhookv1.MaxNodeStateNodes || o.NodeStatus != 500 {
		t.Errorf("omitted %+v", o)
	}
	NodeMaps(&s, 1, func(yield func(NodeEntry) bool) { yield(NodeEntry{Name: "only", Status: skyhookv1.StatusWaiting}) })
	if len(s.NodeStatus) != 1 || s.NodeState != nil || s.OmittedNodes != nil || len(s.NodeBootIDs) != 0 {
		t.Errorf("one node: %+v", s)
	}
}

func TestNodePriorityKeepsStartTimesAndCountsTheNodesThatLeft(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	s := skyhookv1.SkyhookStatus{NodePriority: map[string]metav1.Time{"a": metav1.NewTime(t0), "b": metav1.NewTime(t0)}, NodeOrderOffset: 2}
	NodePriority(&s, []string{"c", "b"}, t0.Add(90*time.Second+time.Millisecond))
	if s.NodeOrderOffset != 3 {
		t.Errorf("offset %d, want 3: a left", s.NodeOrderOffset)
	}
	if got := s.NodePriority["b"].Time; !got.Equal(t0) {
		t.Errorf("b started at %s, want its first start %s", got, t0)
	}
	if got := s.NodePriority["c"].Time; !got.Equal(t0.Add(90 * time.Second)) {
		t.Errorf("c started at %s, want now to the second", got)
	}
	NodePriority(&s, nil, t0)
	if s.NodePriority != nil || s.NodeOrderOffset != 5 {
		t.Errorf("nothing started: %v offset %d, want none and 5", s.NodePriority, s.NodeOrderOffset)
	}
}

// SKYHOOK_NODE_ORDER: the nodes in nodePriority by start time (then name)
// after the offset; a node keeps its place when an earlier one finishes and
// leaves nodePriority. Asked for a few nodes of many, places are counted
// rather than sorted: both ways agree.
func TestPlacesCountFromTheOffsetByStartTime(t *testing.T) {
	at := func(sec int) metav1.Time { return metav1.Unix(int64(1_700_000_000+sec), 0) }
	s := &skyhookv1.SkyhookStatus{NodeOrderOffset: 3, NodePriority: map[string]metav1.Time{"c": at(0), "b": at(5), "a": at(5)}}
	if got := Places(s, []string{"c", "a", "b", "e"}); !slices.Equal(got, []int{3, 4, 5, -1}) {
		t.Errorf("places of c, a, b, e = %v; want 3 4 5 -1", got)
	}
	if NextPlace(s) != 6 {
		t.Errorf("next place %d, want 6", NextPlace(s))
	}
	many := &skyhookv1.SkyhookStatus{NodeOrderOffset: 10, NodePriority: map[string]metav1.Time{}}
	var names []string
	for i := range 100 {
		name := fmt.Sprintf("n%03d", i)
		names = append(names, name)
		many.NodePriority[name] = at(100 - i) // later names started earlier
	}
	sorted := Places(many, names)
	for _, i := range []int{0, 42, 99} {
		if counted := Places(many, []string{names[i]}); counted[0] != sorted[i] || sorted[i] != 10+99-i {
			t.Errorf("%s: counted %d, sorted %d; want %d", names[i], counted[0], sorted[i], 10+99-i)
		}
	}
}
