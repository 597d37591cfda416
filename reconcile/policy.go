package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/rollouts"
	"github.com/skyhook-go/skyhook/api/timewindow"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/compartment"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// policyGate applies a Skyhook's DeploymentPolicy to one pass: it decides
// which waiting nodes may start, in which batch, and keeps each
// compartment's batch state.
type policyGate struct {
	policy       *skyhookv1.DeploymentPolicy
	compartments map[string]*compartmentPass
	// halted names the compartments that halted in this pass.
	halted []string
}

// compartmentPass is one compartment as a pass sees it.
type compartmentPass struct {
	state    skyhookv1.CompartmentStatus
	budget   skyhookv1.DeploymentBudget
	strategy *skyhookv1.DeploymentStrategy
	// counts of the compartment's nodes after the active ones advanced.
	nodes, complete, running, erroring int
	// members of the current batch, and those of them that are erroring.
	members, failed int
	opened          bool
	room            int
}

// deploymentPolicy reads the Skyhook's DeploymentPolicy once per pass: nil
// for none, or one that does not exist (admission refuses that; then
// nothing starts meanwhile, see policyGate).
// A NodeWright's policy is a DeploymentPolicy of NodeWright's group.
func (r *SkyhookReconciler) deploymentPolicy(ctx context.Context, sk *skyhookv1.Skyhook) (*skyhookv1.DeploymentPolicy, error) {
	if sk.Spec.DeploymentPolicy == "" {
		return nil, nil
	}
	k := rollouts.Of(sk)
	policy := k.Policy()
	if err := r.Client.Get(ctx, client.ObjectKey{Name: sk.Spec.DeploymentPolicy}, policy); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return k.PolicyView(policy), nil
}

// policyGate applies the policy (nil when the Skyhook names one that does
// not exist: nothing starts) to the pass; it is nil when the Skyhook has an
// interruption budget instead.
func (pass *rolloutPass) policyGate(view *fleetView) *policyGate {
	sk, policy := pass.sk, pass.policy
	if sk.Spec.DeploymentPolicy == "" {
		return nil
	}
	g := &policyGate{policy: policy, compartments: map[string]*compartmentPass{}}
	if policy == nil {
		return g
	}
	known := pass.r.memory.Batches.Load(sk)
	reset := resetOnCompletion(sk, policy)
	for name, counts := range view.Index.Compartments() {
		c := &compartmentPass{state: known[name]}
		c.state.Name = name
		c.budget, c.strategy = compartment.Settings(policy, name)
		// A batch number on a node above the recorded one means the
		// status write of that batch was lost (a crash): adopt it.
		c.state.Batch = max(c.state.Batch, counts.MaxBatch())
		if c.state.Generation != sk.Generation {
			// A new spec: a halt or failure count is the old spec's; batch
			// sizing starts over unless the policy keeps it.
			if reset {
				c.state = compartment.Reset(c.state)
			}
			c.state.Halted, c.state.ConsecutiveFailures = false, 0
			c.state.Generation = sk.Generation
		}
		c.nodes = counts.Nodes
		c.complete = counts.ByStatus[skyhookv1.StatusComplete]
		c.running = counts.ByStatus[skyhookv1.StatusInProgress]
		c.erroring = counts.ByStatus[skyhookv1.StatusErroring]
		if c.state.Batch > 0 {
			b := counts.Batches[c.state.Batch]
			c.members, c.failed = b.Members, b.Erroring
		}
		g.compartments[name] = c
	}
	return g
}

// closed reports whether no compartment can take a node any more in this
// pass: each was opened and is halted or full. The queue need not be read
// further then.
func (g *policyGate) closed() bool {
	if g.policy == nil {
		return true
	}
	for _, c := range g.compartments {
		if !c.opened || (!c.state.Halted && c.room > 0) {
			return false
		}
	}
	return true
}

// allows reports whether a waiting node may start now, and if so takes
// its place in its compartment's batch and stamps the batch on it. The
// first node a compartment considers opens its next batch: the batch
// before is judged then, once none of its nodes runs a stage.
func (g *policyGate) allows(w *nodeWork) bool {
	if g.policy == nil {
		return false
	}
	c := g.compartments[w.compartment]
	if !c.opened {
		c.opened = true
		if c.state.Halted || c.running > 0 {
			return false
		}
		progress := 0
		if c.nodes > 0 {
			progress = c.complete * 100 / c.nodes
		}
		c.state = compartment.Open(c.strategy, c.state, compartment.Outcome{Members: c.members, Succeeded: c.members - c.failed}, progress)
		if c.state.Halted {
			g.halted = append(g.halted, w.compartment)
			return false
		}
		c.room = compartment.Room(c.budget, c.nodes, c.erroring, c.state.BatchSize)
	}
	if c.state.Halted || c.room <= 0 {
		return false
	}
	c.room--
	c.running++
	w.batch = c.state.Batch
	return true
}

// finishPolicy keeps the compartments' batch state in memory (the status
// keeps it too, for a restart and for admins), resets it when the rollout
// completed and the policy says so, and says how the gate ended.
func (pass *rolloutPass) finishPolicy(g *policyGate, complete bool) report.PolicyOutcome {
	if g == nil {
		return report.PolicyOutcome{}
	}
	names := make([]string, 0, len(g.compartments))
	for name := range g.compartments {
		names = append(names, name)
	}
	sort.Strings(names)
	reset := complete && g.policy != nil && resetOnCompletion(pass.sk, g.policy)
	out := report.PolicyOutcome{Compartments: make([]skyhookv1.CompartmentStatus, 0, len(names)), Ceilings: map[string]int{}}
	running := 0
	for _, name := range names {
		c := g.compartments[name]
		if !c.state.Halted {
			running += c.running
		}
		if reset {
			c.state = compartment.Reset(c.state)
		}
		st := c.state
		st.Nodes, st.Complete, st.InProgress, st.Erroring = int32(c.nodes), int32(c.complete), int32(c.running+c.erroring), int32(c.erroring)
		out.Compartments = append(out.Compartments, st)
		out.Ceilings[name] = compartment.Cap(c.budget, c.nodes)
		if st.Halted {
			out.Halted = append(out.Halted, fmt.Sprintf("%s (%d failed batches in a row)", name, st.ConsecutiveFailures))
		}
	}
	pass.r.memory.Batches.Store(pass.sk.UID, out.Compartments)
	if len(out.Halted) == 0 {
		return out
	}
	out.Policy, out.Stopped = g.policy.Name, running == 0
	for _, name := range g.halted {
		out.HaltedNow = append(out.HaltedNow, fmt.Sprintf("compartment %s halted after %d failed batches in a row (policy %s)",
			name, g.compartments[name].state.ConsecutiveFailures, g.policy.Name))
	}
	return out
}

// resetOnCompletion is the Skyhook's resetBatchStateOnCompletion, else the
// policy's, else true.
func resetOnCompletion(sk *skyhookv1.Skyhook, policy *skyhookv1.DeploymentPolicy) bool {
	if o := sk.Spec.DeploymentPolicyOptions.ResetBatchStateOnCompletion; o != nil {
		return *o
	}
	if policy.Spec.ResetBatchStateOnCompletion != nil {
		return *policy.Spec.ResetBatchStateOnCompletion
	}
	return true
}

// interruptWindow is the window of the DeploymentPolicy, nil when there is
// none. Admission refuses windows that do not parse.
func interruptWindow(policy *skyhookv1.DeploymentPolicy) *timewindow.Window {
	if policy == nil || policy.Spec.InterruptWindow == nil {
		return nil
	}
	w := policy.Spec.InterruptWindow
	window, err := timewindow.Parse(w.Days, w.Start, w.End, w.TimeZone)
	if err != nil {
		return nil
	}
	return &window
}

// resetBatches honours the reset-batch-state annotation (the CLI's reset
// and deployment-policy reset set it): every compartment's batches start
// over from batch 1 with no failures and no halt, the node order
// (nodePriority, nodeOrderOffset) is cleared, and the annotation goes. It
// reports whether it did so.
func (r *SkyhookReconciler) resetBatches(sk *skyhookv1.Skyhook) bool {
	asked := skyhookv1.KindOf(sk).ResetBatchStateAnnotation()
	if _, ok := sk.Annotations[asked]; !ok {
		return false
	}
	known := r.memory.Batches.Load(sk)
	reset := make([]skyhookv1.CompartmentStatus, 0, len(known))
	for _, name := range slices.Sorted(maps.Keys(known)) {
		reset = append(reset, compartment.Reset(known[name]))
	}
	r.memory.Batches.Store(sk.UID, reset)
	sk.Status.Compartments = reset
	sk.Status.NodePriority, sk.Status.NodeOrderOffset = nil, 0
	delete(sk.Annotations, asked)
	r.Recorder.Eventf(sk, nil, corev1.EventTypeNormal, "BatchStateReset", "Reset",
		"batch state of %d compartments reset (next batch: 1) and node order cleared, as asked by %s", len(reset), asked)
	return true
}
