package fleet

import (
	"fmt"
	"slices"
	"testing"
	"time"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func installed(version string, stage skyhookv1.Stage, state skyhookv1.State) []Package {
	return []Package{{Name: "tuning", Version: version, Stage: stage, State: state}}
}

// Putting a node in again moves its share of every counter; removing it
// takes the share away; nothing is counted twice.
func TestCountersFollowPuts(t *testing.T) {
	x := New()
	x.Put(Node{Name: "a", Status: skyhookv1.StatusWaiting, Compartment: "gpu"})
	x.Put(Node{Name: "b", Status: skyhookv1.StatusComplete, Compartment: "gpu", Packages: installed("1.0", skyhookv1.StageConfig, skyhookv1.StateComplete)})
	x.Put(Node{Name: "c", Kind: Ignored, Packages: installed("0.9", skyhookv1.StageConfig, skyhookv1.StateComplete)})
	x.Put(Node{Name: "a", Status: skyhookv1.StatusInProgress, Active: true, Compartment: "gpu", Batch: 2,
		Packages: installed("1.0", skyhookv1.StageApply, skyhookv1.StateInProgress)})

	if x.Len(Work) != 2 || x.Len(Ignored) != 1 {
		t.Errorf("work %d ignored %d, want 2 and 1", x.Len(Work), x.Len(Ignored))
	}
	if x.Count(skyhookv1.StatusWaiting) != 0 || x.Count(skyhookv1.StatusInProgress) != 1 || x.Active() != 1 {
		t.Errorf("waiting %d, in progress %d, active %d; want 0, 1, 1", x.Count(skyhookv1.StatusWaiting), x.Count(skyhookv1.StatusInProgress), x.Active())
	}
	c := x.Compartments()["gpu"]
	if c == nil || c.Nodes != 2 || c.ByStatus[skyhookv1.StatusComplete] != 1 || c.Batches[2].Members != 1 || c.MaxBatch() != 2 {
		t.Errorf("compartment gpu = %+v", c)
	}
	if !x.Recorded("tuning|0.9") || !x.Recorded("tuning|1.0") || x.Versions()["tuning|1.0"] != 2 {
		t.Errorf("versions %v", x.Versions())
	}
	if x.Tallies()[Tally{"tuning", "1.0", skyhookv1.StageApply, skyhookv1.StateInProgress}] != 1 {
		t.Errorf("tallies %v", x.Tallies())
	}

	x.Put(Node{Name: "a", Status: skyhookv1.StatusErroring, Active: true, Compartment: "gpu", Batch: 2})
	if c := x.Compartments()["gpu"]; c.Batches[2].Erroring != 1 {
		t.Errorf("batch 2 = %+v, want one erroring member", c.Batches[2])
	}
	x.Remove("a")
	x.Remove("b")
	x.Remove("missing")
	if x.Len(Work) != 0 || x.Active() != 0 || len(x.Compartments()) != 0 || x.Recorded("tuning|1.0") || len(x.Tallies()) != 1 {
		t.Errorf("after removing: work %d active %d compartments %v versions %v tallies %v",
			x.Len(Work), x.Active(), x.Compartments(), x.Versions(), x.Tallies())
	}
}

// The waiting queue reads in name order from its head, and a node that
// left it is not in it any more.
func TestQueueReadsInNameOrder(t *testing.T) {
	x := New()
	for _, name := range []string{"node-3", "node-1", "node-2", "node-0"} {
		x.Put(Node{Name: name, Status: skyhookv1.StatusWaiting})
	}
	x.Put(Node{Name: "node-1", Status: skyhookv1.StatusInProgress, Active: true})
	var head []string
	x.Ascend(skyhookv1.StatusWaiting, func(name string) bool {
		head = append(head, name)
		return len(head) < 2
	})
	if !slices.Equal(head, []string{"node-0", "node-2"}) {
		t.Errorf("queue head %v, want node-0 node-2", head)
	}
}

// A node's wake comes due once; a wake replaced by a later put does not.
func TestWakesComeDueOnce(t *testing.T) {
	x := New()
	t0 := time.Unix(1_800_000_000, 0)
	x.Put(Node{Name: "a", Status: skyhookv1.StatusErroring, Wake: t0.Add(5 * time.Second)})
	x.Put(Node{Name: "b", Status: skyhookv1.StatusErroring, Wake: t0.Add(10 * time.Second)})
	x.Put(Node{Name: "a", Status: skyhookv1.StatusErroring, Wake: t0.Add(5 * time.Second)}) // the same wake again
	x.Put(Node{Name: "b", Status: skyhookv1.StatusComplete})                                // no wake any more
	if next := x.NextWake(); !next.Equal(t0.Add(5 * time.Second)) {
		t.Errorf("next wake %v", next)
	}
	if due := x.Due(t0.Add(4 * time.Second)); len(due) != 0 {
		t.Errorf("due early: %v", due)
	}
	if due := x.Due(t0.Add(20 * time.Second)); !slices.Equal(due, []string{"a"}) {
		t.Errorf("due %v, want [a]", due)
	}
	if due := x.Due(t0.Add(30 * time.Second)); len(due) != 0 || !x.NextWake().IsZero() {
		t.Errorf("due again %v, next %v", due, x.NextWake())
	}
}

// Marks and noteworthy nodes are sets: put twice, listed once; cleared by
// a put without them.
func TestMarksAndNoteworthySets(t *testing.T) {
	x := New()
	x.Put(Node{Name: "b", Status: skyhookv1.StatusWaiting, NeedsMark: true})
	x.Put(Node{Name: "a", Status: skyhookv1.StatusBlocked, NeedsMark: true, Noteworthy: true})
	x.Put(Node{Name: "b", Status: skyhookv1.StatusWaiting, NeedsMark: true})
	var marks, notes []string
	x.NeedingMarks(func(n string) bool { marks = append(marks, n); return true })
	x.Noteworthy(func(n string) bool { notes = append(notes, n); return true })
	if !slices.Equal(marks, []string{"a", "b"}) || !slices.Equal(notes, []string{"a"}) {
		t.Errorf("marks %v notes %v", marks, notes)
	}
	x.Put(Node{Name: "a", Status: skyhookv1.StatusComplete})
	marks, notes = nil, nil
	x.NeedingMarks(func(n string) bool { marks = append(marks, n); return true })
	x.Noteworthy(func(n string) bool { notes = append(notes, n); return true })
	if !slices.Equal(marks, []string{"b"}) || len(notes) != 0 {
		t.Errorf("after clearing a: marks %v notes %v", marks, notes)
	}
}

// Changes: nodes noted between passes are taken once; All wins over
// nodes until taken.
func TestChangesAreTakenOnce(t *testing.T) {
	var c Changes[string]
	c.Node("demo", "n1")
	c.Node("demo", "n2")
	c.Node("demo", "n1")
	c.Node("other", "n9")
	nodes, all := c.Take("demo")
	slices.Sort(nodes)
	if all || !slices.Equal(nodes, []string{"n1", "n2"}) {
		t.Errorf("took %v all=%t", nodes, all)
	}
	if nodes, all := c.Take("demo"); len(nodes) != 0 || all {
		t.Errorf("took again %v all=%t", nodes, all)
	}
	c.All("other")
	c.Node("other", "n3")
	if nodes, all := c.Take("other"); !all || len(nodes) != 0 {
		t.Errorf("other: %v all=%t, want all", nodes, all)
	}
}

// BenchmarkPut is the bookkeeping of one node's visit in an index of
// 10,000 nodes with 5 packages each.
func BenchmarkPut(b *testing.B) {
	x := New()
	pkgs := make([]Package, 5)
	for i := range pkgs {
		pkgs[i] = Package{Name: fmt.Sprintf("pkg-%d", i), Version: "1.0", Stage: skyhookv1.StageConfig, State: skyhookv1.StateComplete}
	}
	for i := range 10000 {
		x.Put(Node{Name: fmt.Sprintf("node-%05d", i), Status: skyhookv1.StatusComplete, Packages: pkgs})
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		x.Put(Node{Name: fmt.Sprintf("node-%05d", i%10000), Status: skyhookv1.StatusInProgress, Active: true, Packages: pkgs})
	}
}
