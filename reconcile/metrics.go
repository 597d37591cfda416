package reconcile

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Rollout metrics, in controller-runtime's registry (served with its
// reconcile durations and work-queue metrics on the metrics endpoint).
var (
	nodesGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_nodes",
		Help: "Selected nodes of a Skyhook by status (complete, in_progress, waiting, blocked by taints, ignored).",
	}, []string{"skyhook", "status"})
	packagesGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_packages",
		Help: "Package records on the nodes of a Skyhook by package, version, stage and state.",
	}, []string{"skyhook", "package", "version", "stage", "state"})
	budgetGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_rollout_budget",
		Help: "The most nodes a Skyhook may work on at once (interruption budget; with a DeploymentPolicy see skyhook_compartment_*).",
	}, []string{"skyhook"})
	compartmentNodesGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_compartment_nodes",
		Help: "Nodes of a Skyhook in a DeploymentPolicy compartment by status (all, complete, in_progress).",
	}, []string{"skyhook", "compartment", "status"})
	compartmentBatchGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_compartment_batch",
		Help: "Number of the compartment's current batch.",
	}, []string{"skyhook", "compartment"})
	compartmentBatchSizeGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_compartment_batch_size",
		Help: "Size the compartment's current batch opened with (0 before the first batch and after a reset).",
	}, []string{"skyhook", "compartment"})
	compartmentFailuresGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_compartment_consecutive_failures",
		Help: "Batches in a row that ended below the strategy's batchThreshold before its safetyLimit.",
	}, []string{"skyhook", "compartment"})
	compartmentHaltedGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_compartment_halted",
		Help: "1 while the compartment is halted by its failureThreshold.",
	}, []string{"skyhook", "compartment"})

	allGauges = []*prometheus.GaugeVec{nodesGauge, packagesGauge, budgetGauge, compartmentNodesGauge,
		compartmentBatchGauge, compartmentBatchSizeGauge, compartmentFailuresGauge, compartmentHaltedGauge}
)

func init() {
	for _, g := range allGauges {
		metrics.Registry.MustRegister(g)
	}
}

// observe sets a Skyhook's gauges from a pass.
func observe(sk *skyhookv1.Skyhook, work []*nodeWork, p progress, capacity int) {
	forgetMetrics(sk.Name) // a stage or version that is gone must not linger
	tainted := len(p.blocked) - p.ignored
	waiting := p.selected - p.complete - p.active - tainted
	nodesGauge.WithLabelValues(sk.Name, "complete").Set(float64(p.complete))
	nodesGauge.WithLabelValues(sk.Name, "in_progress").Set(float64(p.active))
	nodesGauge.WithLabelValues(sk.Name, "waiting").Set(float64(max(0, waiting)))
	nodesGauge.WithLabelValues(sk.Name, "blocked").Set(float64(tainted))
	nodesGauge.WithLabelValues(sk.Name, "ignored").Set(float64(p.ignored))
	budgetGauge.WithLabelValues(sk.Name).Set(float64(capacity))
	for _, w := range work {
		for _, e := range w.state {
			packagesGauge.WithLabelValues(sk.Name, e.Name, e.Version, string(e.Stage), string(e.State)).Inc()
		}
	}
	for _, c := range sk.Status.Compartments {
		compartmentNodesGauge.WithLabelValues(sk.Name, c.Name, "all").Set(float64(c.Nodes))
		compartmentNodesGauge.WithLabelValues(sk.Name, c.Name, "complete").Set(float64(c.Complete))
		compartmentNodesGauge.WithLabelValues(sk.Name, c.Name, "in_progress").Set(float64(c.InProgress))
		compartmentBatchGauge.WithLabelValues(sk.Name, c.Name).Set(float64(c.Batch))
		compartmentBatchSizeGauge.WithLabelValues(sk.Name, c.Name).Set(float64(c.BatchSize))
		compartmentFailuresGauge.WithLabelValues(sk.Name, c.Name).Set(float64(c.ConsecutiveFailures))
		halted := 0.0
		if c.Halted {
			halted = 1
		}
		compartmentHaltedGauge.WithLabelValues(sk.Name, c.Name).Set(halted)
	}
}

// forgetMetrics removes every series of a Skyhook.
func forgetMetrics(skyhook string) {
	labels := prometheus.Labels{"skyhook": skyhook}
	for _, g := range allGauges {
		g.DeletePartialMatch(labels)
	}
}
