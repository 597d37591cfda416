package reconcile

import (
	"context"
	"time"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/budget"
	"github.com/skyhook-go/skyhook/reconcile/fleet"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// admission is what decides whether a waiting node starts, besides the
// rollout's own budget: the DeploymentPolicy's batches (nil without a
// policy), the NodeDisruptionBudgets (nil when there are none) and the
// Skyhooks that go first on a node.
type admission struct {
	policy *policyGate
	fleet  *fleetGate
	ahead  []skyhookAhead
}

// admitter is one pass's walk of the waiting nodes.
type admitter struct {
	pass             *rolloutPass
	view             *fleetView
	admission        admission
	progress         *report.Progress
	active, capacity int
	starting, marked []*nodeWork
	// retries are the nodes that yielded to workloads and may be tried
	// again: they go after every other waiting node.
	retries []string
	now     time.Time
	err     error
}

// admit picks the waiting nodes that start now, from the head of the
// queue (name order), then the nodes that yielded to workloads and are due
// a try: not while paused, within the budget or the policy's batches and
// the NodeDisruptionBudgets, and only once the Skyhooks that go first are
// complete on the node. A node held behind another Skyhook is marked
// waiting.
func (pass *rolloutPass) admit(ctx context.Context, view *fleetView, a admission, p *report.Progress) ([]*nodeWork, error) {
	if pass.paused {
		return nil, nil
	}
	ad := &admitter{pass: pass, view: view, admission: a, progress: p, active: view.Index.Active(), capacity: pass.capacity(view), now: time.Now()}
	view.Index.Ascend(skyhookv1.StatusWaiting, func(name string) bool { return ad.consider(ctx, name, false) })
	for _, name := range ad.retries {
		if ad.err != nil || !ad.consider(ctx, name, true) {
			break
		}
	}
	for _, w := range ad.marked {
		view.put(pass, w, ad.now)
	}
	for _, w := range ad.starting {
		w.restart()
		w.report.Active = 1
		w.now = skyhookv1.StatusInProgress
	}
	return ad.starting, ad.err
}

// consider starts the waiting node if everything allows it, and reports
// whether the walk goes on.
func (ad *admitter) consider(ctx context.Context, name string, retry bool) bool {
	pass, gate := ad.pass, ad.admission.policy
	if gate == nil && ad.active >= ad.capacity {
		return false // the budget is full: the rest of the queue waits
	}
	if gate != nil && gate.closed() {
		return false
	}
	w := ad.view.Works[name]
	if found, e := pass.refresh(ctx, w); e != nil || !found {
		ad.err = e
		return e == nil
	}
	if !retry {
		if due, yielded := pass.retryDue(w, ad.now); yielded {
			if due {
				ad.retries = append(ad.retries, name)
			}
			return true
		}
	}
	mark := skyhookv1.Status("")
	defer func() {
		if w.mark != mark {
			w.mark = mark
			ad.marked = append(ad.marked, w)
		}
	}()
	if first := waitingFor(ad.admission.ahead, w.node); first != "" {
		ad.progress.WaitBehind(first) // a Skyhook of lower priority number is not done here yet
		mark = skyhookv1.StatusWaiting
		return true
	}
	if gate != nil && !gate.allows(w) {
		return true // its compartment's batch is full, still running or halted
	}
	if ok, e := pass.fleetAllows(ctx, ad.admission.fleet, w, ad.progress); e != nil || !ok {
		ad.err = e
		return e == nil // held by a NodeDisruptionBudget: the next node may be in another domain
	}
	ad.active++
	pass.r.memory.Started.Add(pass.sk.UID, w.node.Name)
	ad.starting = append(ad.starting, w)
	return true
}

// capacity is the interruption budget as a number of the view's nodes.
func (pass *rolloutPass) capacity(view *fleetView) int {
	return budget.Cap(pass.sk.Spec.InterruptionBudget, view.Index.Len(fleet.Work))
}
