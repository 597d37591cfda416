package reconcile

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/memory"
)

// At 10,000 nodes with 10 packages each, the per-node status maps stay
// bounded, list the nodes needing attention first, and count the others.
func TestStatusMapsStayBounded(t *testing.T) {
	const nodes, packages = 10000, 10
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}}
	work := make([]*nodeWork, nodes)
	for i := range work {
		state := skyhookv1.NodeState{}
		for p := range packages {
			name := fmt.Sprintf("package-%02d", p)
			state[skyhookv1.NodeStateKey(name, "2024.05.10")] = skyhookv1.PackageStatus{Name: name, Version: "2024.05.10",
				Image: "nvcr.io/nvidia/skyhook-packages/" + name, Stage: skyhookv1.StagePostInterrupt, State: skyhookv1.StateComplete}
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("gpu-node-%05d", i)}}
		node.Status.NodeInfo.BootID = fmt.Sprintf("5f2d3c9a-0b1e-4c4f-9d6a-%012d", i)
		now := skyhookv1.StatusComplete
		switch {
		case i%1000 == 7:
			now = skyhookv1.StatusErroring
		case i%100 == 3:
			now = skyhookv1.StatusInProgress
		}
		work[i] = &nodeWork{node: node, state: state, now: now}
	}
	pass := &rolloutPass{sk: sk}
	var mem memory.Memory[*nodeWork]
	v, _, _ := mem.BeginPass(skyhookv1.RefOf(sk), "", time.Now())
	view := &fleetView{v}
	for _, w := range work {
		view.put(pass, w, time.Now())
	}
	reportNodes(&sk.Status, view)
	s := sk.Status
	if len(s.NodeState) != skyhookv1.MaxNodeStateNodes || len(s.NodeStatus) != skyhookv1.MaxNodeStatusNodes || len(s.NodeBootIDs) != skyhookv1.MaxNodeStatusNodes {
		t.Fatalf("maps of %d, %d, %d nodes, want %d, %d, %d", len(s.NodeState), len(s.NodeStatus), len(s.NodeBootIDs),
			skyhookv1.MaxNodeStateNodes, skyhookv1.MaxNodeStatusNodes, skyhookv1.MaxNodeStatusNodes)
	}
	if o := s.OmittedNodes; o == nil || o.NodeState != nodes-skyhookv1.MaxNodeStateNodes || o.NodeStatus != nodes-skyhookv1.MaxNodeStatusNodes {
		t.Errorf("omitted %+v", o)
	}
	for i := 7; i < nodes; i += 1000 { // every erroring node is listed
		if _, ok := s.NodeState[fmt.Sprintf("gpu-node-%05d", i)]; !ok {
			t.Errorf("erroring node %d left out of nodeState", i)
		}
	}
	if len(s.NodePriority) != 110 { // the 100 in progress and 10 erroring
		t.Errorf("nodePriority lists %d nodes, want 110", len(s.NodePriority))
	}
	encoded, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("status of %d nodes x %d packages: %d bytes", nodes, packages, len(encoded))
	if len(encoded) > 600<<10 {
		t.Errorf("status is %d bytes, over the 600 KiB bound", len(encoded))
	}
}

// SKYHOOK_NODE_ORDER: the nodes in nodePriority by start time (then name)
// after the offset, the nodes starting now after them; a node keeps its
// place when an earlier one finishes and leaves nodePriority.
func TestOrderNodes(t *testing.T) {
	at := func(sec int) metav1.Time { return metav1.Unix(int64(1_700_000_000+sec), 0) }
	w := func(name string) *nodeWork {
		return &nodeWork{node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}}
	}
	a, b, c, d, e := w("a"), w("b"), w("c"), w("d"), w("e")
	s := &skyhookv1.SkyhookStatus{NodeOrderOffset: 3, NodePriority: map[string]metav1.Time{"c": at(0), "b": at(5), "a": at(5)}}
	orderNodes(s, []*nodeWork{a, b, c, d, e}, []*nodeWork{e, d})
	got := []int{c.order, a.order, b.order, e.order, d.order}
	if fmt.Sprint(got) != "[3 4 5 6 7]" {
		t.Errorf("orders c, a, b, e, d = %v; want 3 4 5 6 7", got)
	}
	// c finishes: it leaves nodePriority and the offset counts it.
	s.NodeOrderOffset, s.NodePriority = 4, map[string]metav1.Time{"b": at(5), "a": at(5), "e": at(9), "d": at(9)}
	orderNodes(s, []*nodeWork{a, b, d, e}, nil)
	if got := []int{a.order, b.order, d.order, e.order}; fmt.Sprint(got) != "[4 5 6 7]" {
		t.Errorf("after c left: a, b, d, e = %v; want 4 5 6 7 (unchanged)", got)
	}
}
