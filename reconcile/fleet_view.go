package reconcile

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/compartment"
	"github.com/skyhook-go/skyhook/reconcile/fleet"
)

// A pass visits only the nodes that changed since the last one (their node
// or stage pods: the watch handlers note them in fleetViews.changes), the
// nodes whose timer is due (a retry's backoff, a timeout) and the head of
// the waiting queue; what it knows of every other node, and every counter
// the status and the budget need, it keeps in a fleetView between passes.
// A pass visits every node when there is no view yet (start-up), when what
// every node's standing depends on changed (the spec, the pause and
// disable annotations, the DeploymentPolicy, the Skyhooks that go first;
// see passBasis), and every fullPassEvery as a safety net.

// fullPassEvery bounds how long a view is trusted without a pass over
// every node.
const fullPassEvery = 10 * time.Minute

// fleetViews keeps a view per Skyhook, by name (the basis names the UID).
type fleetViews struct {
	mu      sync.Mutex
	views   map[string]*fleetView
	changes fleet.Changes
}

// fleetView is what the passes of one Skyhook know of its nodes.
type fleetView struct {
	index *fleet.Index
	// works are the nodes as last visited, by name.
	works  map[string]*nodeWork
	basis  string
	fullAt time.Time
}

// begin returns the Skyhook's view and the nodes this pass visits, sorted;
// full says it visits every node, with a new, empty view.
func (v *fleetViews) begin(sk *skyhookv1.Skyhook, basis string, now time.Time) (view *fleetView, visit []string, full bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	changed, all := v.changes.Take(sk.Name)
	view = v.views[sk.Name]
	if view == nil || all || view.basis != basis || now.Sub(view.fullAt) > fullPassEvery {
		view = newFleetView(basis, now)
		if v.views == nil {
			v.views = map[string]*fleetView{}
		}
		v.views[sk.Name] = view
		return view, nil, true
	}
	seen := make(map[string]bool, len(changed))
	for _, name := range append(changed, view.index.Due(now)...) {
		if !seen[name] {
			seen[name] = true
			visit = append(visit, name)
		}
	}
	sort.Strings(visit)
	return view, visit, false
}

func newFleetView(basis string, now time.Time) *fleetView {
	return &fleetView{index: fleet.New(), works: map[string]*nodeWork{}, basis: basis, fullAt: now}
}

// drop forgets the Skyhook's view: its next pass visits every node. A pass
// that failed half way drops it, as does a deleted Skyhook.
func (v *fleetViews) drop(name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.views, name)
}

// passBasis is what every node's standing in a pass depends on besides the
// node itself: a change of it makes the next pass visit every node.
func passBasis(sk *skyhookv1.Skyhook, policy *skyhookv1.DeploymentPolicy, ahead []skyhookAhead) string {
	var b strings.Builder
	// A Flux-style "reconcile now" request visits every node too.
	fmt.Fprintf(&b, "%s/%d/%t/%s/%s/%s", sk.UID, sk.Generation, !sk.DeletionTimestamp.IsZero(),
		sk.Annotations[skyhookv1.PauseAnnotation], sk.Annotations[skyhookv1.DisableAnnotation], sk.Annotations[meta.ReconcileRequestAnnotation])
	if policy != nil {
		fmt.Fprintf(&b, "|policy %s/%s", policy.UID, policy.ResourceVersion)
	}
	for _, a := range ahead {
		fmt.Fprintf(&b, "|ahead %s/%t/%s", a.name, a.everywhere, a.selector)
	}
	return b.String()
}

// put records the node as this pass left it. The view keeps none of the
// node's running or finished stage pods (its next visit reads them again):
// a pod kept here would keep alive the cache's old copy of it, and with it
// the node metadata the pod carries, for every node of the fleet.
func (view *fleetView) put(pass *rolloutPass, w *nodeWork, now time.Time) {
	view.works[w.node.Name] = w
	w.pods = nil
	n := fleet.Node{Name: w.node.Name, Kind: w.kind, Status: w.now, Active: w.report.active > 0 || w.holding, Holding: w.holding, Compartment: w.compartment,
		Batch: w.batch, Noteworthy: w.report.noteworthy(), Packages: packagesOf(w.record())}
	if w.report.requeue > 0 {
		n.Wake = now.Add(w.report.requeue)
	}
	if w.kind == fleet.Work {
		_, n.NeedsMark = pass.markWanted(w)
	}
	view.index.Put(n)
}

// remove forgets a node that is gone or no longer selected.
func (view *fleetView) remove(name string) {
	delete(view.works, name)
	view.index.Remove(name)
}

// marked notes that the node's status mark was written: the node's event
// brings it back, and until then no pass writes it again.
func (view *fleetView) marked(name string) {
	if n, ok := view.index.Get(name); ok {
		n.NeedsMark = false
		view.index.Put(n)
	}
}

func packagesOf(state skyhookv1.NodeState) []fleet.Package {
	if len(state) == 0 {
		return nil
	}
	out := make([]fleet.Package, 0, len(state))
	for _, e := range state {
		out = append(out, fleet.Package{Name: e.Name, Version: e.Version, Stage: e.Stage, State: e.State, Restarts: e.Restarts})
	}
	return out
}

// progress adds up what the nodes contribute to the status: the counters
// from the index, the lists from the noteworthy nodes.
func (view *fleetView) progress() progress {
	x := view.index
	p := progress{selected: x.Len(fleet.Work) + x.Len(fleet.Malformed), ignored: x.Len(fleet.Ignored),
		complete: x.Count(skyhookv1.StatusComplete), active: x.Active() - x.Holding()}
	x.Noteworthy(func(name string) bool {
		p.addLists(view.works[name].report)
		return true
	})
	p.sortByNode()
	return p
}

// nextWake is how long until a node's timer is due, zero for none.
func (view *fleetView) nextWake(now time.Time) time.Duration {
	next := view.index.NextWake()
	if next.IsZero() {
		return 0
	}
	return max(next.Sub(now), time.Millisecond)
}

// compartmentOf names the node's compartment ("" without a policy).
func compartmentOf(policy *skyhookv1.DeploymentPolicy, node *corev1.Node) string {
	if policy == nil {
		return ""
	}
	return compartment.Of(policy, node)
}

// recorded are the package versions (NodeStateKeys) any selected node
// records; nil when a record could not be read (then every version may
// still be on a node).
func (view *fleetView) recorded() map[string]bool {
	if view.index.Len(fleet.Malformed) > 0 {
		return nil
	}
	out := make(map[string]bool, len(view.index.Versions()))
	for key := range view.index.Versions() {
		out[key] = true
	}
	return out
}

// byAttention calls fn for the work nodes, those an admin most wants to see
// first (erroring, blocked, in progress, waiting, complete, then any other
// status), each status in name order, until fn returns false.
func (view *fleetView) byAttention(fn func(w *nodeWork) bool) {
	more := true
	visit := func(name string) bool {
		more = fn(view.works[name])
		return more
	}
	for _, s := range attentionOrder {
		if view.index.Ascend(s, visit); !more {
			return
		}
	}
}

// attentionOrder orders node statuses by how much an admin wants to see
// them.
var attentionOrder = []skyhookv1.Status{skyhookv1.StatusErroring, skyhookv1.StatusBlocked, skyhookv1.StatusInProgress,
	skyhookv1.StatusWaiting, skyhookv1.StatusComplete}
