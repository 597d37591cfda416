package packageset

import (
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// PackageSet metrics, in controller-runtime's registry beside the rollout's.
// The condition gauge is the shape Flux's controllers export their Ready
// condition in, so a Flux dashboard's query carries over with the name.
var (
	readyGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_packageset_condition",
		Help: "1 for the PackageSet's current Ready status (True, False, Unknown), 0 for the others.",
	}, []string{"namespace", "name", "type", "status"})
	objectsGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_packageset_applied_objects",
		Help: "Objects the PackageSet's last applied revision holds (its inventory).",
	}, []string{"namespace", "name"})
	failuresCounter = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skyhook_packageset_failures_total",
		Help: "Reconciles of the PackageSet that failed, by reason (ArtifactFailed, ValidationFailed, ApplyFailed, PruneFailed, AccessDenied, DependencyNotReady).",
	}, []string{"namespace", "name", "reason"})
)

func init() {
	metrics.Registry.MustRegister(readyGauge, objectsGauge, failuresCounter)
}

// observe sets the PackageSet's gauges from its status as it is patched.
func observe(ps *skyhookv1.PackageSet) {
	status := "Unknown"
	if c := conditions.Get(ps, meta.ReadyCondition); c != nil {
		status = string(c.Status)
	}
	for _, s := range []string{"True", "False", "Unknown"} {
		value := 0.0
		if s == status {
			value = 1
		}
		readyGauge.WithLabelValues(ps.Namespace, ps.Name, meta.ReadyCondition, s).Set(value)
	}
	objects := 0
	if ps.Status.Inventory != nil {
		objects = len(ps.Status.Inventory.Entries)
	}
	objectsGauge.WithLabelValues(ps.Namespace, ps.Name).Set(float64(objects))
}

// countFailure counts a failed reconcile.
func countFailure(ps *skyhookv1.PackageSet, reason string) {
	failuresCounter.WithLabelValues(ps.Namespace, ps.Name, reason).Inc()
}

// forget drops a deleted PackageSet's series.
func forget(ps *skyhookv1.PackageSet) {
	labels := prometheus.Labels{"namespace": ps.Namespace, "name": ps.Name}
	readyGauge.DeletePartialMatch(labels)
	objectsGauge.DeletePartialMatch(labels)
	failuresCounter.DeletePartialMatch(labels)
}
