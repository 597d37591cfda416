package reconcile

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/compartment"
)

// policyGate applies a Skyhook's DeploymentPolicy to one pass: it decides
// which waiting nodes may start, in which batch, and keeps each
// compartment's batch state.
type policyGate struct {
	policy       *skyhookv1.DeploymentPolicy
	of           map[*nodeWork]string
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
func (r *SkyhookReconciler) deploymentPolicy(ctx context.Context, sk *skyhookv1.Skyhook) (*skyhookv1.DeploymentPolicy, error) {
	if sk.Spec.DeploymentPolicy == "" {
		return nil, nil
	}
	policy := &skyhookv1.DeploymentPolicy{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: sk.Spec.DeploymentPolicy}, policy); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return policy, nil
}

// policyGate applies the policy (nil when the Skyhook names one that does
// not exist: nothing starts) to the pass; it is nil when the Skyhook has an
// interruption budget instead.
func (r *SkyhookReconciler) policyGate(sk *skyhookv1.Skyhook, work []*nodeWork, policy *skyhookv1.DeploymentPolicy) *policyGate {
	if sk.Spec.DeploymentPolicy == "" {
		return nil
	}
	g := &policyGate{policy: policy, of: map[*nodeWork]string{}, compartments: map[string]*compartmentPass{}}
	if policy == nil {
		return g
	}
	known := r.batches.load(sk)
	for _, w := range work {
		name := compartment.Of(policy, w.node)
		g.of[w] = name
		c := g.compartments[name]
		if c == nil {
			c = &compartmentPass{state: known[name]}
			c.state.Name = name
			c.budget, c.strategy = compartment.Settings(policy, name)
			g.compartments[name] = c
		}
		// A batch number on a node above the recorded one means the
		// status write of that batch was lost (a crash): adopt it.
		c.state.Batch = max(c.state.Batch, w.batch)
	}
	reset := resetOnCompletion(sk, policy)
	for _, c := range g.compartments {
		if c.state.Generation != sk.Generation {
			// A new spec: a halt or failure count is the old spec's; batch
			// sizing starts over unless the policy keeps it.
			if reset {
				c.state = compartment.Reset(c.state)
			}
			c.state.Halted, c.state.ConsecutiveFailures = false, 0
			c.state.Generation = sk.Generation
		}
	}
	for _, w := range work {
		c := g.compartments[g.of[w]]
		c.nodes++
		switch w.now {
		case skyhookv1.StatusComplete:
			c.complete++
		case skyhookv1.StatusInProgress:
			c.running++
		case skyhookv1.StatusErroring:
			c.erroring++
		}
		if w.batch == c.state.Batch && w.batch > 0 {
			c.members++
			if w.now == skyhookv1.StatusErroring {
				c.failed++
			}
		}
	}
	return g
}

// allows reports whether a waiting node may start now, and if so takes
// its place in its compartment's batch and stamps the batch on it. The
// first node a compartment considers opens its next batch: the batch
// before is judged then, once none of its nodes runs a stage.
func (g *policyGate) allows(w *nodeWork) bool {
	if g.policy == nil {
		return false
	}
	c := g.compartments[g.of[w]]
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
			g.halted = append(g.halted, g.of[w])
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

// finishPolicy keeps the compartments' batch state (in memory, and in the
// status for a restart and for admins), resets it when the rollout
// completed and the policy says so, and reports a halt. It returns true when
// a compartment halted and no other compartment has a node running a stage:
// the rollout cannot finish until someone changes the spec (retries of the
// halted compartment's failed nodes do not lift a halt).
func (r *SkyhookReconciler) finishPolicy(sk *skyhookv1.Skyhook, g *policyGate, complete bool) bool {
	if g == nil {
		sk.Status.Compartments = nil
		conditions.Delete(sk, skyhookv1.RolloutHaltedCondition)
		return false
	}
	names := make([]string, 0, len(g.compartments))
	for name := range g.compartments {
		names = append(names, name)
	}
	sort.Strings(names)
	reset := complete && g.policy != nil && resetOnCompletion(sk, g.policy)
	statuses := make([]skyhookv1.CompartmentStatus, 0, len(names))
	var halted []string
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
		st.Nodes, st.Complete, st.InProgress = int32(c.nodes), int32(c.complete), int32(c.running+c.erroring)
		statuses = append(statuses, st)
		if st.Halted {
			halted = append(halted, fmt.Sprintf("%s (%d failed batches in a row)", name, st.ConsecutiveFailures))
		}
	}
	r.batches.store(sk.UID, statuses)
	sk.Status.Compartments = statuses
	if len(halted) == 0 {
		conditions.Delete(sk, skyhookv1.RolloutHaltedCondition)
		return false
	}
	conditions.MarkTrue(sk, skyhookv1.RolloutHaltedCondition, "FailureThresholdReached",
		"no new nodes start in compartment %v: the failureThreshold of policy %s was reached; change the Skyhook's spec to resume", halted, g.policy.Name)
	for _, name := range g.halted {
		if r.Recorder != nil {
			r.Recorder.Eventf(sk, nil, corev1.EventTypeWarning, "RolloutHalted", "Rollout",
				"compartment %s halted after %d failed batches in a row (policy %s)", name, g.compartments[name].state.ConsecutiveFailures, g.policy.Name)
		}
	}
	return running == 0
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

// batchStates holds each Skyhook's compartment batch state between passes.
// The status carries it too, but the cached Skyhook can lag this
// operator's own status writes, and judging a batch twice would count its
// failures twice; the status is read only when the process has nothing
// newer (after a restart).
type batchStates struct {
	mu     sync.Mutex
	states map[types.UID]map[string]skyhookv1.CompartmentStatus
}

func (b *batchStates) load(sk *skyhookv1.Skyhook) map[string]skyhookv1.CompartmentStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]skyhookv1.CompartmentStatus{}
	for _, st := range sk.Status.Compartments {
		out[st.Name] = st
	}
	for name, st := range b.states[sk.UID] {
		if st.Batch >= out[name].Batch {
			out[name] = st
		}
	}
	return out
}

func (b *batchStates) store(uid types.UID, statuses []skyhookv1.CompartmentStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.states == nil {
		b.states = map[types.UID]map[string]skyhookv1.CompartmentStatus{}
	}
	m := map[string]skyhookv1.CompartmentStatus{}
	for _, st := range statuses {
		m[st.Name] = st
	}
	b.states[uid] = m
}

func (b *batchStates) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.states, uid)
}
