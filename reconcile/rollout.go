package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/reconcile/fleet"
	"github.com/skyhook-go/skyhook/reconcile/report"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// rollout does one pass: reads the nodes it visits (see fleetView) and
// their stage pods, advances every visited node already in progress,
// starts waiting nodes from the head of the queue while the budget allows,
// and writes the status from the view's counters.
func (r *SkyhookReconciler) rollout(ctx context.Context, sk *skyhookv1.Skyhook) (result ctrl.Result, err error) {
	pass, err := r.newPass(ctx, sk)
	if err != nil {
		return ctrl.Result{}, err
	}
	ahead, err := r.skyhooksAhead(ctx, sk)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := time.Now()
	view, visit, full := r.beginPass(sk, passBasis(sk, pass.policy, ahead), now)
	defer func() {
		if err != nil {
			r.memory.DropView(pass.ref) // what the view holds may be half updated
		}
	}()
	g, err := r.gather(ctx, sk, visitSet{names: visit, all: full})
	if err != nil {
		return ctrl.Result{}, err
	}
	observePass(pass.ref, full, len(g.work)+len(g.held)+len(g.gone))
	for _, name := range g.gone {
		view.remove(name)
	}
	for _, w := range g.held {
		pass.hold(w)
		view.put(pass, w, now)
	}
	if tainted, err := pass.autoTaint(ctx, g.work); tainted || err != nil {
		for _, w := range g.work {
			r.memory.Changes.Node(pass.ref, w.node.Name) // not judged in this pass: the next one does
		}
		return ctrl.Result{Requeue: tainted}, err
	}
	if reset, err := pass.reapplyRebooted(ctx, g.work); reset || err != nil {
		for _, w := range g.work {
			r.memory.Changes.Node(pass.ref, w.node.Name) // judged again, the reset nodes as new ones
		}
		return ctrl.Result{Requeue: reset}, err
	}
	orderNodes(&sk.Status, g.work, nil)
	if err := pass.followActive(ctx, g.work); err != nil {
		return ctrl.Result{}, err
	}
	for _, w := range g.work {
		w.compartment = compartmentOf(pass.policy, w.node)
		view.put(pass, w, now)
	}
	capacity := pass.capacity(view)
	gate := pass.policyGate(view)
	p := report.Progress{HeldBy: heldEverywhere(ahead)}
	fleetGate, err := pass.fleetGate(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	starting, err := pass.admit(ctx, view, admission{policy: gate, fleet: fleetGate, ahead: ahead}, &p)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() { // the view keeps stand-ins, not cached nodes
		for _, w := range append(append(append(g.work, g.held...), starting...), pass.refreshed...) {
			w.stub()
		}
	}()
	orderNodes(&sk.Status, nil, starting)
	pool := pass.pool(ctx)
	if err := pass.markStatus(ctx, view, pool); err != nil {
		return ctrl.Result{}, err
	}
	if err := pass.runtimeTaints(ctx, g.work, pool); err != nil {
		return ctrl.Result{}, err
	}
	for _, w := range starting {
		pool.advance(w, true)
	}
	if err := pool.wait(); err != nil {
		return ctrl.Result{}, err
	}
	for _, w := range starting {
		view.put(pass, w, now)
	}
	pass.releaseFleetSlots(g.work)
	for _, w := range append(g.work, starting...) {
		p.NoteApplying(w.report.Applying, w.report.ApplyingNode)
	}
	result, err = pass.report(ctx, view, gate, p, capacity)
	if fleetGate != nil && fleetGate.held > 0 && (result.RequeueAfter == 0 || result.RequeueAfter > fleetRecheck) {
		result.RequeueAfter = fleetRecheck
	}
	return result, err
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
	kind := skyhookv1.KindOf(sk)
	return &rolloutPass{r: r, sk: sk, ref: kind.Named(sk.Name), paused: sk.Annotations[kind.PauseAnnotation()] == "true",
		policy: policy, window: interruptWindow(policy), snapshots: snapshots}, nil
}

// followActive deletes the stage pods behind the records and advances
// every visited node already in progress (in the pool); each node's report
// says where it stands.
func (pass *rolloutPass) followActive(ctx context.Context, work []*nodeWork) error {
	pool := pass.pool(ctx)
	for _, w := range work {
		finished := finishedPods(pass.sk, w)
		w.finishing = len(finished) > 0
		pool.retirePods(finished)
		pass.replace(w, outdatedPods(pass.sk, w), pool)
		if pass.skipNotReady(w, pool, &w.report) || pass.skippedDrain(w, &w.report) || pass.yieldedNode(w, &w.report) {
			continue
		}
		switch {
		case nodeComplete(pass.sk, w):
			w.now = skyhookv1.StatusComplete
			w.holding = w.hasPods()
			if cordon.OwnedBy(w.node, pass.sk) {
				pool.releaseCordon(w.node) // left by a crash between the last stage and the release
			}
		case pass.nodeActive(w):
			w.report.Active = 1
			pool.advance(w, !pass.paused)
		default:
			pass.waiting(w)
		}
	}
	return pool.wait()
}

// waiting classes a node that has work to start: blocked when it has taints
// the Skyhook does not tolerate, waiting otherwise.
func (pass *rolloutPass) waiting(w *nodeWork) {
	w.now = skyhookv1.StatusWaiting
	if taints := stagepod.Untolerated(pass.sk, w.node, pass.r.runtimeTaints()); len(taints) > 0 {
		w.report.NodeBlocked(w.node.Name, fmt.Sprintf("taints not tolerated: %s (add them to additionalTolerations to run here)", taintList(taints)))
		w.report.Untolerated = append(w.report.Untolerated, w.node.Name)
		w.now = skyhookv1.StatusBlocked
	}
}

// hold reports an ignored or malformed node.
func (pass *rolloutPass) hold(w *nodeWork) {
	message := "ignored: labelled " + pass.ref.Kind.IgnoreNodeLabel() + "=true"
	if w.kind == fleet.Malformed {
		message = "record unreadable, held until repaired or reset (skyhook node reset): " + w.problem
	}
	held := skyhookv1.NodeAttention{Name: w.node.Name, Status: skyhookv1.StatusBlocked, Message: message}
	w.report.Blocked = []skyhookv1.NodeAttention{held}
	if w.kind == fleet.Malformed {
		w.report.Malformed = []skyhookv1.NodeAttention{held}
	}
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
		name := stagepod.PackageOf(pod)
		w.leaving[name] = append(w.leaving[name], pod)
		pass.r.reportReplaced(pass.sk, w.node.Name, pod)
	}
	pool.deletePods(outdated)
}

// nodeActive reports whether work on the node has begun and not finished:
// it counts against the budget.
func (pass *rolloutPass) nodeActive(w *nodeWork) bool {
	sk := pass.sk
	if pass.r.memory.Started.Has(sk.UID, w.node.Name) {
		return true
	}
	for _, pods := range w.pods {
		if len(pods) > 0 {
			return true
		}
	}
	if w.node.Labels[pass.ref.StatusKey()] == string(skyhookv1.StatusBlocked) {
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

// report ends a pass: the policy's batches, the snapshots no node needs
// any more, and the status and metrics from the view's counters.
func (pass *rolloutPass) report(ctx context.Context, view *fleetView, gate *policyGate, passWide report.Progress, capacity int) (ctrl.Result, error) {
	p := view.progress()
	p.HeldBy, p.Behind, p.Applying, p.ApplyingNode = passWide.HeldBy, passWide.Behind, passWide.Applying, passWide.ApplyingNode
	p.FleetHeld, p.FleetHold = passWide.FleetHeld, passWide.FleetHold
	outcome := pass.finishPolicy(gate, p.Complete == p.Selected)
	report.Policy(pass.sk, outcome)
	for _, note := range outcome.HaltedNow {
		pass.r.record(pass.sk, report.Event{Type: corev1.EventTypeWarning, Reason: "RolloutHalted", Action: "Rollout", Note: note})
	}
	p.Halted = outcome.Stopped
	if err := pass.pruneSnapshots(ctx, view.recorded()); err != nil {
		return ctrl.Result{}, err
	}
	p.BlockedNodes = view.Index.Count(skyhookv1.StatusBlocked) + view.Index.Len(fleet.Malformed)
	heldBefore := conditions.GetMessage(pass.sk, skyhookv1.FleetBudgetHeldCondition)
	report.Summarise(pass.sk, p, report.Rollout{Paused: pass.paused, MaxAttempts: pass.r.MaxAttempts})
	if held := conditions.GetMessage(pass.sk, skyhookv1.FleetBudgetHeldCondition); held != "" && held != heldBefore {
		pass.r.record(pass.sk, report.Event{Type: corev1.EventTypeNormal, Reason: "FleetBudgetHeld", Action: "Rollout", Note: held})
	}
	reportNodes(&pass.sk.Status, view)
	pass.sk.Status.CompartmentStatuses = report.CompartmentStatuses(outcome, p, capacity)
	observe(pass.sk, view, p, capacity, pass.policy)
	return ctrl.Result{RequeueAfter: view.nextWake(time.Now())}, nil
}
