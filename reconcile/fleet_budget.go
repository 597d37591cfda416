package reconcile

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/fleetbudget"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// The cluster's NodeDisruptionBudgets cap the nodes out of service across
// every rollout of every kind (package fleetbudget decides). A pass asks
// the reconciler's ledger before it starts a node, after the rollout's own
// budget and its DeploymentPolicy allowed it: a node starts only when all
// of them do. The ledger is shared by the passes of every rollout this
// operator runs, so two rollouts cannot both take the last slot before the
// cache shows the first one's node.

// fleetRecheck is how soon a rollout with nodes held by a budget looks
// again: the slot that frees may be on a node it does not select, whose
// change does not wake it.
const fleetRecheck = 10 * time.Second

// fleetGate is what one pass reads of the budgets.
type fleetGate struct {
	budgets []*fleetbudget.Budget
	// nodes are every node as the budgets count it, read on the first ask.
	nodes   []fleetbudget.Node
	read    bool
	rollout fleetbudget.Rollout
	// held counts the nodes held back in the pass.
	held int
}

// fleetGate reads the budgets; nil when the cluster has none, the usual
// case, which costs one list from the cache.
func (pass *rolloutPass) fleetGate(ctx context.Context) (*fleetGate, error) {
	var list skyhookv1.NodeDisruptionBudgetList
	if err := pass.r.Client.List(ctx, &list); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	g := &fleetGate{rollout: fleetbudget.Rollout{Name: pass.ref.String(), Priority: int(pass.sk.Spec.Priority)}}
	for i := range list.Items {
		b, errs := fleetbudget.Compile(&list.Items[i])
		if len(errs) > 0 {
			// Admission refuses such a budget; one written around it
			// cannot decide, and the budget's status says why.
			log.FromContext(ctx).Error(errs.ToAggregate(), "NodeDisruptionBudget ignored", "budget", list.Items[i].Name)
			continue
		}
		g.budgets = append(g.budgets, b)
	}
	return g, nil
}

// allows asks the ledger whether the waiting node may start now; when not,
// the pass's progress says why.
func (pass *rolloutPass) fleetAllows(ctx context.Context, g *fleetGate, w *nodeWork, p *report.Progress) (bool, error) {
	if g == nil || len(g.budgets) == 0 {
		return true, nil
	}
	if !g.read {
		var nodes corev1.NodeList
		if err := pass.r.Client.List(ctx, &nodes, client.UnsafeDisableDeepCopy); err != nil {
			return false, err
		}
		g.nodes, g.read = fleetbudget.NodesOf(nodes.Items), true
	}
	hold, ok := pass.r.fleet.Ask(time.Now(), fleetbudget.Question{Budgets: g.budgets, Fleet: g.nodes, Rollout: g.rollout,
		Candidate: fleetbudget.NodeOf(w.node), Interrupting: pass.interrupts(w)})
	if !ok {
		g.held++
		p.WaitForFleetBudget(hold.Message())
	}
	return ok, nil
}

// interrupts reports whether the rollout's work left on the node cordons,
// drains or taints it: a package not done there with an interrupt of its
// own or one its changed configMap asks for, or a rollout that holds a
// runtime-required taint until its packages are done.
func (pass *rolloutPass) interrupts(w *nodeWork) bool {
	sk := pass.sk
	if sk.Spec.RuntimeRequired {
		return true
	}
	for _, name := range packageNames(sk, w.state) {
		step := nextStep(sk, name, w.state, w.config)
		if step.Action == lifecycle.Done {
			continue
		}
		if d := declared(sk, name); d != nil && d.Interrupt != nil {
			return true
		}
		if marker := w.config[rerunKey(name)]; marker != "" {
			return true
		}
	}
	return false
}

// releaseFleetSlots tells the ledger the nodes the pass found done, or
// waiting again (yielded to workloads), so their slots free now.
func (pass *rolloutPass) releaseFleetSlots(work []*nodeWork) {
	var done []string
	for _, w := range work {
		if w.now == skyhookv1.StatusComplete || w.now == skyhookv1.StatusWaiting { // done, or yielded to workloads
			done = append(done, w.node.Name)
		}
	}
	if len(done) > 0 {
		pass.r.fleet.Release(pass.ref.String(), done)
	}
}
