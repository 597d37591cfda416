package memory

import (
	"sort"
	"sync"
	"time"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/fleet"
)

// A pass visits only the nodes that changed since the last one (their node
// or stage pods: the watch handlers note them in Memory.Changes), the
// nodes whose timer is due (a retry's backoff, a timeout) and the head of
// the waiting queue; what it knows of every other node, and every counter
// the status and the budget need, it keeps in a View between passes. A
// pass visits every node when there is no view yet (start-up), when what
// every node's standing depends on changed (the basis the reconciler
// gives: the spec, the pause and disable annotations, the
// DeploymentPolicy, the Skyhooks that go first), and every FullPassEvery
// as a safety net.

// FullPassEvery bounds how long a view is trusted without a pass over
// every node.
const FullPassEvery = 10 * time.Minute

// View is what the passes of one Skyhook know of its nodes.
type View[W any] struct {
	Index *fleet.Index
	// Works are the nodes as last visited, by name.
	Works  map[string]W
	basis  string
	fullAt time.Time
}

// views keeps a view per rollout (the basis names the UID).
type views[W any] struct {
	mu    sync.Mutex
	views map[skyhookv1.RolloutRef]*View[W]
}

// BeginPass returns the rollout's view and the nodes its pass visits,
// sorted: the changed ones and the due ones. full says it visits every
// node, with a new, empty view.
func (m *Memory[W]) BeginPass(rollout skyhookv1.RolloutRef, basis string, now time.Time) (view *View[W], visit []string, full bool) {
	v := &m.views
	v.mu.Lock()
	defer v.mu.Unlock()
	changed, all := m.Changes.Take(rollout)
	view = v.views[rollout]
	if view == nil || all || view.basis != basis || now.Sub(view.fullAt) > FullPassEvery {
		view = &View[W]{Index: fleet.New(), Works: map[string]W{}, basis: basis, fullAt: now}
		if v.views == nil {
			v.views = map[skyhookv1.RolloutRef]*View[W]{}
		}
		v.views[rollout] = view
		return view, nil, true
	}
	seen := make(map[string]bool, len(changed))
	for _, node := range append(changed, view.Index.Due(now)...) {
		if !seen[node] {
			seen[node] = true
			visit = append(visit, node)
		}
	}
	sort.Strings(visit)
	return view, visit, false
}

// DropView forgets the rollout's view: its next pass visits every node. A
// pass that failed half way drops it.
func (m *Memory[W]) DropView(rollout skyhookv1.RolloutRef) { m.views.drop(rollout) }

func (v *views[W]) drop(rollout skyhookv1.RolloutRef) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.views, rollout)
}

// sizes are the nodes each view keeps, by rollout.
func (v *views[W]) sizes() map[skyhookv1.RolloutRef]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[skyhookv1.RolloutRef]int, len(v.views))
	for ref, view := range v.views {
		out[ref] = len(view.Works)
	}
	return out
}
