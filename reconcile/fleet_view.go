package reconcile

import (
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/compartment"
	"github.com/skyhook-go/skyhook/reconcile/fleet"
	"github.com/skyhook-go/skyhook/reconcile/memory"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// A pass visits the nodes that changed since the last one, the nodes whose
// timer is due and the head of the waiting queue; what it knows of every
// other node it keeps in a fleetView between passes (memory.View, the
// rules of which pass visits what are there). passBasis is what every
// node's standing depends on besides the node itself.

// fleetView is what the passes of one Skyhook know of its nodes: the
// memory's view, with the reconciler's per-node work.
type fleetView struct {
	*memory.View[*nodeWork]
}

// beginPass returns the Skyhook's view and the nodes this pass visits,
// sorted; full says it visits every node, with a new, empty view.
func (r *SkyhookReconciler) beginPass(sk *skyhookv1.Skyhook, basis string, now time.Time) (*fleetView, []string, bool) {
	view, visit, full := r.memory.BeginPass(skyhookv1.RefOf(sk), basis, now)
	return &fleetView{view}, visit, full
}

// passBasis is what every node's standing in a pass depends on besides the
// node itself: a change of it makes the next pass visit every node.
func passBasis(sk *skyhookv1.Skyhook, policy *skyhookv1.DeploymentPolicy, ahead []skyhookAhead) string {
	var b strings.Builder
	// A Flux-style "reconcile now" request visits every node too.
	fmt.Fprintf(&b, "%s/%d/%t/%s/%s/%s", sk.UID, sk.Generation, !sk.DeletionTimestamp.IsZero(),
		sk.Annotations[skyhookv1.KindOf(sk).PauseAnnotation()], sk.Annotations[skyhookv1.KindOf(sk).DisableAnnotation()], sk.Annotations[meta.ReconcileRequestAnnotation])
	if policy != nil {
		fmt.Fprintf(&b, "|policy %s/%s", policy.UID, policy.ResourceVersion)
	}
	for _, a := range ahead {
		fmt.Fprintf(&b, "|ahead %s/%t/%s", a.ref, a.everywhere, a.selector)
	}
	return b.String()
}

// put records the node as this pass left it. The view keeps none of the
// node's running or finished stage pods (its next visit reads them again):
// a pod kept here would keep alive the cache's old copy of it, and with it
// the node metadata the pod carries, for every node of the fleet.
func (view *fleetView) put(pass *rolloutPass, w *nodeWork, now time.Time) {
	view.Works[w.node.Name] = w
	w.pods = nil
	n := fleet.Node{Name: w.node.Name, Kind: w.kind, Status: w.now, Active: w.report.Active > 0 || w.holding, Holding: w.holding, Compartment: w.compartment,
		Batch: w.batch, Noteworthy: w.report.Noteworthy(), Packages: packagesOf(w.record())}
	if w.report.Requeue > 0 {
		n.Wake = now.Add(w.report.Requeue)
	}
	if w.kind == fleet.Work {
		_, n.NeedsMark = pass.markWanted(w)
	}
	view.Index.Put(n)
}

// remove forgets a node that is gone or no longer selected.
func (view *fleetView) remove(name string) {
	delete(view.Works, name)
	view.Index.Remove(name)
}

// marked notes that the node's status mark was written: the node's event
// brings it back, and until then no pass writes it again.
func (view *fleetView) marked(name string) {
	if n, ok := view.Index.Get(name); ok {
		n.NeedsMark = false
		view.Index.Put(n)
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
func (view *fleetView) progress() report.Progress {
	x := view.Index
	p := report.Progress{Selected: x.Len(fleet.Work) + x.Len(fleet.Malformed), Ignored: x.Len(fleet.Ignored),
		Complete: x.Count(skyhookv1.StatusComplete), Active: x.Active() - x.Holding()}
	x.Noteworthy(func(name string) bool {
		p.AddLists(view.Works[name].report)
		return true
	})
	p.SortByNode()
	return p
}

// nextWake is how long until a node's timer is due, zero for none.
func (view *fleetView) nextWake(now time.Time) time.Duration {
	next := view.Index.NextWake()
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
	if view.Index.Len(fleet.Malformed) > 0 {
		return nil
	}
	out := make(map[string]bool, len(view.Index.Versions()))
	for key := range view.Index.Versions() {
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
		more = fn(view.Works[name])
		return more
	}
	for _, s := range attentionOrder {
		if view.Index.Ascend(s, visit); !more {
			return
		}
	}
}

// attentionOrder orders node statuses by how much an admin wants to see
// them.
var attentionOrder = []skyhookv1.Status{skyhookv1.StatusErroring, skyhookv1.StatusBlocked, skyhookv1.StatusInProgress,
	skyhookv1.StatusWaiting, skyhookv1.StatusComplete}
