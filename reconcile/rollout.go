package reconcile

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/skyhook-go/skyhook/api/timewindow"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/budget"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// rolloutPass is one pass over a Skyhook's nodes: what it reads once and
// shares with every node's turn (nodePass), which read it at the same time
// in the pool and must not change it.
type rolloutPass struct {
	r  *SkyhookReconciler
	sk *skyhookv1.Skyhook
	// paused: running stages are followed, nothing new starts.
	paused bool
	// policy is the Skyhook's DeploymentPolicy, nil for none.
	policy *skyhookv1.DeploymentPolicy
	// window is the policy's interrupt window, nil for none.
	window *timewindow.Window
	// snapshots are the Skyhook's package snapshots by snapshot.Key.
	snapshots map[string]*corev1.ConfigMap
}

// rollout does one pass: reads the selected nodes and the stage pods,
// advances every node already in progress, starts waiting nodes while the
// budget allows, and writes the status.
func (r *SkyhookReconciler) rollout(ctx context.Context, sk *skyhookv1.Skyhook) (ctrl.Result, error) {
	g, err := r.gather(ctx, sk)
	if err != nil {
		return ctrl.Result{}, err
	}
	pass, err := r.newPass(ctx, sk)
	if err != nil {
		return ctrl.Result{}, err
	}
	work := g.work
	// A node with an unreadable record is selected and not complete: it
	// holds the Skyhook short of Ready until its record is repaired.
	p := progress{selected: len(work) + len(g.malformed), blocked: append(g.ignored, g.malformed...), ignored: len(g.ignored), malformed: g.malformed}
	if tainted, err := pass.autoTaint(ctx, work, &p); tainted || err != nil {
		return ctrl.Result{Requeue: tainted}, err
	}
	orderNodes(&sk.Status, work, nil)
	waiting, err := pass.followActive(ctx, work, &p)
	if err != nil {
		return ctrl.Result{}, err
	}
	capacity := budget.Cap(sk.Spec.InterruptionBudget, len(work))
	gate := pass.policyGate(work)
	ahead, err := r.skyhooksAhead(ctx, sk)
	if err != nil {
		return ctrl.Result{}, err
	}
	p.heldBy = heldEverywhere(ahead)
	starting := pass.admit(waiting, gate, ahead, capacity, &p)
	orderNodes(&sk.Status, nil, starting)
	pool := pass.pool(ctx, &p)
	pass.markStatus(work, pool)
	if err := pass.runtimeTaints(ctx, work, pool); err != nil {
		return ctrl.Result{}, err
	}
	for _, w := range starting {
		pool.advance(w, true)
	}
	if err := pool.wait(); err != nil {
		return ctrl.Result{}, err
	}
	outcome := pass.finishPolicy(gate, p.complete == p.selected)
	pass.reportPolicy(outcome)
	p.halted = outcome.stopped
	if err := pass.pruneSnapshots(ctx, g.recorded); err != nil {
		return ctrl.Result{}, err
	}
	p.blockedNodes = countStatus(work, skyhookv1.StatusBlocked) + len(g.malformed)
	pass.summarise(p)
	pass.reportNodes(work)
	sk.Status.CompartmentStatuses = compartmentStatuses(outcome, p, capacity)
	observe(sk, work, p, capacity, pass.policy)
	return ctrl.Result{RequeueAfter: p.requeue}, nil
}

// newPass reads what the pass needs once: the package snapshots (writing
// those of the declared versions) and the DeploymentPolicy.
func (r *SkyhookReconciler) newPass(ctx context.Context, sk *skyhookv1.Skyhook) (*rolloutPass, error) {
	snapshots, err := r.snapshots(ctx, sk)
	if err != nil {
		return nil, err
	}
	policy, err := r.deploymentPolicy(ctx, sk)
	if err != nil {
		return nil, err
	}
	return &rolloutPass{r: r, sk: sk, paused: sk.Annotations[skyhookv1.PauseAnnotation] == "true",
		policy: policy, window: interruptWindow(policy), snapshots: snapshots}, nil
}

// followActive deletes the stage pods behind the records, advances every
// node already in progress (in the pool), counts the complete ones, and
// returns the nodes waiting to start.
func (pass *rolloutPass) followActive(ctx context.Context, work []*nodeWork, p *progress) ([]*nodeWork, error) {
	pool := pass.pool(ctx, p)
	var waiting []*nodeWork
	for _, w := range work {
		pool.deletePods(finishedPods(pass.sk, w))
		pass.replace(w, outdatedPods(pass.sk, w), pool)
		if pass.skipNotReady(w, pool, p) || pass.skippedDrain(w, p) {
			continue
		}
		switch {
		case nodeComplete(pass.sk, w):
			p.complete++
			w.now = skyhookv1.StatusComplete
			if cordon.OwnedBy(w.node, pass.sk) {
				pool.releaseCordon(w.node) // left by a crash between the last stage and the release
			}
		case pass.nodeActive(w):
			p.active++
			pool.advance(w, !pass.paused)
		default:
			w.now = skyhookv1.StatusWaiting
			waiting = append(waiting, w)
		}
	}
	return waiting, pool.wait()
}

// replace deletes the node's stage pods that run an outdated definition:
// their stage starts again with the spec's once they are gone.
func (pass *rolloutPass) replace(w *nodeWork, outdated []*corev1.Pod, pool *nodePool) {
	if len(outdated) == 0 {
		return
	}
	if w.leaving == nil {
		w.leaving = map[string][]*corev1.Pod{}
	}
	for _, pod := range outdated {
		name := pod.Labels[stagepod.PackageLabel]
		w.leaving[name] = append(w.leaving[name], pod)
		pass.r.reportReplaced(pass.sk, w.node.Name, pod)
	}
	pool.deletePods(outdated)
}

// admit picks the waiting nodes that start now, in name order: not while
// paused, within the budget or the policy's batches, and only once the
// Skyhooks that go first are complete on the node. A node with taints the
// Skyhook does not tolerate is blocked.
func (pass *rolloutPass) admit(waiting []*nodeWork, gate *policyGate, ahead []skyhookAhead, capacity int, p *progress) []*nodeWork {
	var starting []*nodeWork
	for _, w := range waiting {
		if taints := stagepod.Untolerated(pass.sk, w.node, pass.r.RuntimeRequiredTaint); len(taints) > 0 {
			p.nodeBlocked(w.node.Name, fmt.Sprintf("taints not tolerated: %s (add them to additionalTolerations to run here)", taintList(taints)))
			p.untolerated = append(p.untolerated, w.node.Name)
			w.now = skyhookv1.StatusBlocked
			continue
		}
		if pass.paused || (gate == nil && p.active >= capacity) {
			continue // waits for a slot; later nodes are still checked for taints
		}
		if first := waitingFor(ahead, w.node); first != "" {
			p.waitBehind(first) // a Skyhook of lower priority number is not done here yet
			w.mark = skyhookv1.StatusWaiting
			continue
		}
		if gate != nil && !gate.allows(w) {
			continue // its compartment's batch is full, still running or halted
		}
		p.active++
		pass.r.started.add(pass.sk.UID, w.node.Name)
		w.now = skyhookv1.StatusInProgress
		starting = append(starting, w)
	}
	return starting
}

// nodeActive reports whether work on the node has begun and not finished:
// it counts against the budget.
func (pass *rolloutPass) nodeActive(w *nodeWork) bool {
	sk := pass.sk
	if pass.r.started.has(sk.UID, w.node.Name) {
		return true
	}
	for _, pods := range w.pods {
		if len(pods) > 0 {
			return true
		}
	}
	if w.node.Labels[skyhookv1.StatusKey(sk.Name)] == string(skyhookv1.StatusBlocked) {
		// Skipped while NotReady (skipNotReady): back, it waits for a
		// budget slot to resume its stage.
		return false
	}
	for _, e := range w.state {
		if e.State == skyhookv1.StateInProgress || e.State == skyhookv1.StateErroring {
			return true
		}
	}
	// A node that finished an earlier generation and has more to do now is
	// waiting, not active, until the budget lets it start.
	return false
}
