// Package budgetstatus writes what each NodeDisruptionBudget counts, to
// its status (what `kubectl get nodedisruptionbudgets` prints) and to
// metrics: the nodes it selects, how many may be out of service now and
// how many are, by rollout and by failure domain, and whether one of its
// windows is open. Package fleetbudget counts; this package reads the
// cluster and writes. The rollouts do not read this status: each pass
// counts from the nodes themselves, so a status behind by a moment never
// lets a node through.
package budgetstatus

// +kubebuilder:rbac:groups=skyhook.nvidia.com,resources=nodedisruptionbudgets/status,verbs=get;update;patch

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/fleetbudget"
)

// Condition types of a NodeDisruptionBudget.
const (
	// ReadyCondition is True while the budget is valid and counted.
	ReadyCondition = "Ready"
	// ActiveCondition is True while the budget applies: it has no
	// windows, or one is open.
	ActiveCondition = "Active"
)

// maxListed bounds the rollouts, domains and node names the status lists
// (the CRD's limits), so a large fleet's status stays a small object.
const (
	maxListed      = 256
	maxNodesListed = 64
)

// Reconciler keeps the budgets' status and metrics.
type Reconciler struct {
	Client client.Client
}

// SetupWithManager counts a budget again when it changes and when a node
// goes out of service or comes back (or its labels change).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("nodedisruptionbudget").
		For(&skyhookv1.NodeDisruptionBudget{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.everyBudget), builder.WithPredicates(countChanged)).
		Complete(r)
}

// countChanged passes the node events that may change a count.
var countChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, after := fleetbudget.NodeOf(e.ObjectOld.(*corev1.Node)), fleetbudget.NodeOf(e.ObjectNew.(*corev1.Node))
		return before.TakenBy != after.TakenBy || before.Interrupting != after.Interrupting ||
			!maps.Equal(before.Labels, after.Labels)
	},
}

// everyBudget maps a node to every budget: any may select it.
func (r *Reconciler) everyBudget(ctx context.Context, _ client.Object) []reconcile.Request {
	var list skyhookv1.NodeDisruptionBudgetList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, b := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&b)})
	}
	return out
}

// Reconcile counts one budget and writes its status and metrics.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := &skyhookv1.NodeDisruptionBudget{}
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		if apierrors.IsNotFound(err) {
			forget(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := b.DeepCopy()
	compiled, errs := fleetbudget.Compile(b)
	now := time.Now()
	var wake time.Duration
	if len(errs) > 0 {
		forget(b.Name)
		setCondition(b, ReadyCondition, metav1.ConditionFalse, "InvalidSpec", errs.ToAggregate().Error())
		apimeta.RemoveStatusCondition(&b.Status.Conditions, ActiveCondition)
	} else {
		var nodes corev1.NodeList
		if err := r.Client.List(ctx, &nodes, client.UnsafeDisableDeepCopy); err != nil {
			return ctrl.Result{}, err
		}
		tally := compiled.Count(fleetbudget.NodesOf(nodes.Items), now)
		writeStatus(b, tally)
		observe(b.Name, tally)
		if next := compiled.NextChange(now); !next.IsZero() {
			wake = next.Sub(now) + time.Second
		}
	}
	b.Status.ObservedGeneration = b.Generation
	if err := r.Client.Status().Patch(ctx, b, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{RequeueAfter: wake}, nil
}

// writeStatus puts the tally in the status.
func writeStatus(b *skyhookv1.NodeDisruptionBudget, t fleetbudget.Tally) {
	s := &b.Status
	s.Selected, s.Allowed, s.Disrupted = int32(t.Selected), int32(t.Allowed), int32(t.Disrupted)
	s.Rollouts = nil
	for _, name := range slices.Sorted(maps.Keys(t.ByRollout)) {
		nodes := slices.Sorted(slices.Values(t.ByRollout[name]))
		kind, rollout, _ := strings.Cut(name, "/")
		s.Rollouts = append(s.Rollouts, skyhookv1.DisruptionByRollout{Kind: kind, Name: rollout, Nodes: nodes[:min(len(nodes), maxNodesListed)], Count: int32(len(nodes))})
	}
	s.Rollouts = s.Rollouts[:min(len(s.Rollouts), maxListed)]
	s.Domains = nil
	for _, name := range slices.Sorted(maps.Keys(t.Domains)) {
		if d := t.Domains[name]; d.Disrupted > 0 {
			s.Domains = append(s.Domains, skyhookv1.DisruptionByDomain{Domain: name, Disrupted: int32(d.Disrupted), Allowed: int32(d.Allowed)})
		}
	}
	s.Domains = s.Domains[:min(len(s.Domains), maxListed)]
	setCondition(b, ReadyCondition, metav1.ConditionTrue, "Counted", countMessage(t))
	if t.Active {
		setCondition(b, ActiveCondition, metav1.ConditionTrue, "Applies", "the budget applies now")
	} else {
		setCondition(b, ActiveCondition, metav1.ConditionFalse, "OutsideWindows", "none of the budget's windows is open: it allows every node")
	}
}

func countMessage(t fleetbudget.Tally) string {
	return fmt.Sprintf("%d of %d selected nodes out of service, %d allowed", t.Disrupted, t.Selected, t.Allowed)
}

func setCondition(b *skyhookv1.NodeDisruptionBudget, kind string, status metav1.ConditionStatus, reason, message string) {
	apimeta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: kind, Status: status, Reason: reason, Message: message, ObservedGeneration: b.Generation})
}

// The budgets' metrics, in controller-runtime's registry.
var (
	nodesGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_node_disruption_budget_nodes",
		Help: "Nodes of a NodeDisruptionBudget: selected, allowed (out of service at once, now) and disrupted (out of service).",
	}, []string{"budget", "count"})
	activeGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_node_disruption_budget_active",
		Help: "1 while a NodeDisruptionBudget applies (no windows, or one open), else 0.",
	}, []string{"budget"})
	domainGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_node_disruption_budget_domain_nodes",
		Help: "Nodes of a failure domain of a NodeDisruptionBudget's topology: selected, allowed and disrupted.",
	}, []string{"budget", "domain", "count"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(nodesGauge, activeGauge, domainGauge)
}

// observe sets the budget's series from the tally.
func observe(budget string, t fleetbudget.Tally) {
	forget(budget) // domains that went are not left behind
	nodesGauge.WithLabelValues(budget, "selected").Set(float64(t.Selected))
	nodesGauge.WithLabelValues(budget, "allowed").Set(float64(t.Allowed))
	nodesGauge.WithLabelValues(budget, "disrupted").Set(float64(t.Disrupted))
	active := 0.0
	if t.Active {
		active = 1
	}
	activeGauge.WithLabelValues(budget).Set(active)
	for name, d := range t.Domains {
		domainGauge.WithLabelValues(budget, name, "selected").Set(float64(d.Selected))
		domainGauge.WithLabelValues(budget, name, "allowed").Set(float64(d.Allowed))
		domainGauge.WithLabelValues(budget, name, "disrupted").Set(float64(d.Disrupted))
	}
}

// forget drops the budget's series.
func forget(budget string) {
	labels := prometheus.Labels{"budget": budget}
	nodesGauge.DeletePartialMatch(labels)
	activeGauge.DeletePartialMatch(labels)
	domainGauge.DeletePartialMatch(labels)
}
