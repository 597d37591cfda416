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
		Help: "The most nodes a Skyhook may work on at once.",
	}, []string{"skyhook"})
)

func init() {
	metrics.Registry.MustRegister(nodesGauge, packagesGauge, budgetGauge)
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
}

// forgetMetrics removes every series of a Skyhook.
func forgetMetrics(skyhook string) {
	labels := prometheus.Labels{"skyhook": skyhook}
	nodesGauge.DeletePartialMatch(labels)
	packagesGauge.DeletePartialMatch(labels)
	budgetGauge.DeletePartialMatch(labels)
}
