package reconcile

import (
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/skyhook-go/skyhook/api/timewindow"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/drain"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// What a pass carries: what it shares with every node's turn (rolloutPass,
// its flow in rollout.go) and one node's turn (nodePass, its flow in
// node.go).

// rolloutPass is one pass over a Skyhook's nodes: what it reads once and
// shares with every node's turn (nodePass), which read it at the same time
// in the pool and must not change it.
type rolloutPass struct {
	r  *SkyhookReconciler
	sk *skyhookv1.Skyhook
	// ref names the rollout (its kind and name), and so its keys.
	ref skyhookv1.RolloutRef
	// paused: running stages are followed, nothing new starts.
	paused bool
	// policy is the Skyhook's DeploymentPolicy, nil for none.
	policy *skyhookv1.DeploymentPolicy
	// window is the policy's interrupt window, nil for none.
	window *timewindow.Window
	// snapshots are the Skyhook's package snapshots by snapshot.Key.
	snapshots map[string]*corev1.ConfigMap
	// refreshed are the nodes the pass read again from the view's
	// stand-ins, to stub again when it ends.
	refreshed []*nodeWork
}

// nodePass is one node's turn in a pass: the record it builds (state and
// config start as copies of what the node shows) and what it reports. Its
// methods advance the node's packages, start and follow their stage pods
// (stagepods.go) and run the node's interrupt (interrupts.go). Turns of
// different nodes run at once in the pass's pool, so a turn writes only its
// own fields, its node's record and the API.
type nodePass struct {
	*rolloutPass
	work   *nodeWork
	state  skyhookv1.NodeState
	config map[string]string
	// start lets the turn start new stages; false (a paused Skyhook) only
	// follows the running ones.
	start bool
	// interrupt is the merged interrupt due on the node in this turn.
	interrupt *skyhookv1.Interrupt
	// early is the node's drain before a stage (drainFirst) in this turn,
	// nil when none ran.
	early    *interrupt.Record
	progress *report.Progress
	// drain is the node's drain in this turn, nil when none lasts: its
	// start and blockers go on the node as NodeWright writes them.
	drain *drainState
	// retrying are the record keys of the packages whose failed stage is
	// tried again (after its backoff): erroring on their entry, but the
	// node stays in progress until a stage fails for good, as NodeWright
	// v0.20 shows it.
	retrying map[string]bool
}

// nodePass begins the node's turn.
func (pass *rolloutPass) nodePass(w *nodeWork, start bool) *nodePass {
	return &nodePass{rolloutPass: pass, work: w, state: maps.Clone(w.state), config: maps.Clone(w.config), start: start, progress: &report.Progress{}}
}

// drainState is the node's drain in a turn.
type drainState struct {
	since    time.Time
	blockers []drain.Blocker
	// keep: the drain timed out; its marks stay as they are.
	keep bool
}
