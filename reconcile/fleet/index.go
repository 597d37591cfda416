// Package fleet keeps, for one Skyhook, what the passes found on each of its
// nodes: where the node stands, whether it holds a budget slot, its
// compartment and batch, what its record says, and when it needs a look
// again. The counters a pass needs (nodes by status, slots in use, the
// nodes of each compartment, the packages by version and state, the
// versions still recorded) are kept up to date as nodes are put in, so a
// pass that visits one node costs that node plus O(log n), not a walk over
// the fleet. Names are kept in ordered sets (google/btree) so the waiting
// queue and the status's bounded per-node maps read in rollout order.
package fleet

import (
	"container/heap"
	"time"

	"github.com/google/btree"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Kind says how a node counts.
type Kind int

const (
	// Work is a node the rollout works on.
	Work Kind = iota
	// Ignored is labelled to be ignored: selected, never worked on.
	Ignored
	// Malformed has a record that cannot be read: held until repaired.
	Malformed
)

// Node is what the index keeps of one node after it was visited.
type Node struct {
	Name string
	Kind Kind
	// Status is where the node stands (Work nodes).
	Status skyhookv1.Status
	// Active holds a budget slot.
	Active bool
	// Holding is an active node whose work is done but whose stage pods
	// are not gone yet: it keeps its slot, and counts as complete.
	Holding bool
	// Compartment is the node's compartment of the DeploymentPolicy ("" without
	// one) and Batch the batch it last started in.
	Compartment string
	Batch       int32
	// Wake is when the node needs a visit though nothing of it changed (a
	// retry's backoff, a timeout); zero for never.
	Wake time.Time
	// Noteworthy nodes have something for the status's lists (erroring,
	// blocked, a drain held, an interrupt window, an uninstall).
	Noteworthy bool
	// NeedsMark nodes need their status label written.
	NeedsMark bool
	// Packages are the entries of the node's record.
	Packages []Package
}

// Package is one entry of a node's record, as the metrics count it.
type Package struct {
	Name, Version string
	Stage         skyhookv1.Stage
	State         skyhookv1.State
	Restarts      int32
}

// Tally counts the nodes whose record has a package at a version, stage and
// state.
type Tally struct {
	Name, Version string
	Stage         skyhookv1.Stage
	State         skyhookv1.State
}

// Compartment counts one compartment's nodes.
type Compartment struct {
	Nodes    int
	ByStatus map[skyhookv1.Status]int
	// Batches counts, per batch number, the nodes last started in it and
	// those of them erroring now.
	Batches map[int32]BatchCount
}

// BatchCount is one batch's members and failures.
type BatchCount struct{ Members, Erroring int }

// MaxBatch is the highest batch a node of the compartment started in.
func (c *Compartment) MaxBatch() int32 {
	var most int32
	for b, n := range c.Batches {
		if n.Members > 0 && b > most {
			most = b
		}
	}
	return most
}

// Index is one Skyhook's nodes. It is not safe for concurrent use: passes of
// one Skyhook run one at a time.
type Index struct {
	nodes        map[string]*Node
	kinds        map[Kind]int
	byStatus     map[skyhookv1.Status]*btree.BTreeG[string]
	active       int
	holding      int
	compartments map[string]*Compartment
	tallies      map[Tally]int
	restarts     map[[2]string]int32
	versions     map[string]int
	noteworthy   *btree.BTreeG[string]
	marks        *btree.BTreeG[string]
	wakes        wakeHeap
}

func names() *btree.BTreeG[string] { return btree.NewOrderedG[string](32) }

// New is an empty index.
func New() *Index {
	return &Index{nodes: map[string]*Node{}, kinds: map[Kind]int{}, byStatus: map[skyhookv1.Status]*btree.BTreeG[string]{},
		compartments: map[string]*Compartment{}, tallies: map[Tally]int{}, restarts: map[[2]string]int32{}, versions: map[string]int{},
		noteworthy: names(), marks: names()}
}

// Put replaces what the index knows of the node.
func (x *Index) Put(n Node) {
	x.Remove(n.Name)
	stored := n
	x.nodes[n.Name] = &stored
	x.count(&stored, 1)
}

// Remove forgets the node (deleted, or no longer selected).
func (x *Index) Remove(name string) {
	old, ok := x.nodes[name]
	if !ok {
		return
	}
	x.count(old, -1)
	delete(x.nodes, name)
}

// count adds (d=1) or takes away (d=-1) the node's share of every counter.
func (x *Index) count(n *Node, d int) {
	x.kinds[n.Kind] += d
	for _, p := range n.Packages {
		x.versions[skyhookv1.NodeStateKey(p.Name, p.Version)] += d
		x.tallies[Tally{p.Name, p.Version, p.Stage, p.State}] += d
		x.restarts[[2]string{p.Name, p.Version}] += int32(d) * p.Restarts
		if x.versions[skyhookv1.NodeStateKey(p.Name, p.Version)] == 0 {
			delete(x.versions, skyhookv1.NodeStateKey(p.Name, p.Version))
		}
		if x.tallies[Tally{p.Name, p.Version, p.Stage, p.State}] == 0 {
			delete(x.tallies, Tally{p.Name, p.Version, p.Stage, p.State})
		}
	}
	setMember(x.noteworthy, n.Name, n.Noteworthy, d)
	setMember(x.marks, n.Name, n.NeedsMark, d)
	if d > 0 && !n.Wake.IsZero() {
		heap.Push(&x.wakes, wake{at: n.Wake, name: n.Name})
	}
	if n.Kind != Work {
		return
	}
	set := x.byStatus[n.Status]
	if set == nil {
		set = names()
		x.byStatus[n.Status] = set
	}
	setMember(set, n.Name, true, d)
	if n.Active {
		x.active += d
	}
	if n.Active && n.Holding {
		x.holding += d
	}
	c := x.compartments[n.Compartment]
	if c == nil {
		c = &Compartment{ByStatus: map[skyhookv1.Status]int{}, Batches: map[int32]BatchCount{}}
		x.compartments[n.Compartment] = c
	}
	c.Nodes += d
	c.ByStatus[n.Status] += d
	if n.Batch > 0 {
		b := c.Batches[n.Batch]
		b.Members += d
		if n.Status == skyhookv1.StatusErroring {
			b.Erroring += d
		}
		c.Batches[n.Batch] = b
	}
	if c.Nodes == 0 {
		delete(x.compartments, n.Compartment)
	}
}

func setMember(set *btree.BTreeG[string], name string, member bool, d int) {
	switch {
	case !member:
	case d > 0:
		set.ReplaceOrInsert(name)
	default:
		set.Delete(name)
	}
}

// Get is what the index knows of the node.
func (x *Index) Get(name string) (Node, bool) {
	n, ok := x.nodes[name]
	if !ok {
		return Node{}, false
	}
	return *n, true
}

// Len counts the nodes of a kind.
func (x *Index) Len(k Kind) int { return x.kinds[k] }

// Count counts the Work nodes at a status.
func (x *Index) Count(s skyhookv1.Status) int {
	if set := x.byStatus[s]; set != nil {
		return set.Len()
	}
	return 0
}

// Active counts the nodes holding a budget slot.
func (x *Index) Active() int { return x.active }

// Holding counts the active nodes that only wait for their stage pods to
// be gone.
func (x *Index) Holding() int { return x.holding }

// Ascend calls fn for the Work nodes at a status in name order, until fn
// returns false.
func (x *Index) Ascend(s skyhookv1.Status, fn func(name string) bool) {
	if set := x.byStatus[s]; set != nil {
		set.Ascend(fn)
	}
}

// Noteworthy calls fn for the noteworthy nodes in name order.
func (x *Index) Noteworthy(fn func(name string) bool) { x.noteworthy.Ascend(fn) }

// NeedingMarks calls fn for the nodes whose status label is to be written,
// in name order, until fn returns false.
func (x *Index) NeedingMarks(fn func(name string) bool) { x.marks.Ascend(fn) }

// Compartments are the counters by compartment name; read only.
func (x *Index) Compartments() map[string]*Compartment { return x.compartments }

// Tallies are the package counters; read only.
func (x *Index) Tallies() map[Tally]int { return x.tallies }

// Restarts are the retries of each package version, summed over the nodes;
// read only.
func (x *Index) Restarts() map[[2]string]int32 { return x.restarts }

// Recorded reports whether any node records the version (a NodeStateKey).
func (x *Index) Recorded(key string) bool { return x.versions[key] > 0 }

// Versions are the recorded versions (NodeStateKeys); read only.
func (x *Index) Versions() map[string]int { return x.versions }

// Due takes the nodes whose wake time has come.
func (x *Index) Due(now time.Time) []string {
	var due []string
	seen := map[string]bool{}
	for x.wakes.Len() > 0 && !x.wakes[0].at.After(now) {
		w := heap.Pop(&x.wakes).(wake)
		// A node put in again since has a wake of its own in the heap (or
		// none): only the current one counts, once.
		if n, ok := x.nodes[w.name]; ok && n.Wake.Equal(w.at) && !seen[w.name] {
			seen[w.name] = true
			due = append(due, w.name)
		}
	}
	return due
}

// NextWake is the earliest wake time still to come, zero for none.
func (x *Index) NextWake() time.Time {
	for x.wakes.Len() > 0 {
		w := x.wakes[0]
		if n, ok := x.nodes[w.name]; ok && n.Wake.Equal(w.at) {
			return w.at
		}
		heap.Pop(&x.wakes) // stale
	}
	return time.Time{}
}

type wake struct {
	at   time.Time
	name string
}

// wakeHeap orders wakes by time (container/heap).
type wakeHeap []wake

func (h wakeHeap) Len() int           { return len(h) }
func (h wakeHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h wakeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *wakeHeap) Push(v any)        { *h = append(*h, v.(wake)) }
func (h *wakeHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}
