package reconcile

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/compartment"
	"github.com/skyhook-go/skyhook/reconcile/gaugeset"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// NodeWright's metrics: its names, labels and meaning, so that its Grafana
// dashboards and the alerts and recording rules written for it work
// unchanged (docs/operations.md#metrics). NodeWright v0.18 renamed them and
// v0.20 publishes each gauge twice: nodewright_<x> labelled nodewright_name,
// and the name every earlier release used, skyhook_<x> labelled
// skyhook_name, with the same value and the same other labels; the old
// half is deprecated and PUBLISH_LEGACY_METRICS=false drops it. So do these.
//
// Both kinds of rollout publish both halves under their name: a Skyhook is
// what NodeWright v0.20 mirrors into a NodeWright of its name, whose
// series these are, so a dashboard written for v0.20 shows every rollout
// whichever kind it is, also with the old half dropped. A Skyhook and a
// NodeWright of one name are one rollout (twins.go) and only the one that
// leads publishes; the gauges keep which kind a name's series are of, so
// that the other one forgetting its own never takes the leader's.

const (
	currentPrefix = "nodewright_"
	legacyPrefix  = "skyhook_"
	// legacyRemoval is NodeWright's release that removes the skyhook_*
	// names, as its deprecation notice says.
	legacyRemoval = "v0.21.0"
)

// twinGauge is one of NodeWright's gauges under both its names. The first
// label of each is the rollout's name: nodewright_name, skyhook_name.
type twinGauge struct {
	current, legacy *prometheus.GaugeVec
}

func newTwinGauge(name, help string, labels ...string) *twinGauge {
	legacyHelp := fmt.Sprintf("%s (DEPRECATED: use %s%s with the nodewright_name label; removed in %s)", help, currentPrefix, name, legacyRemoval)
	return &twinGauge{
		current: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: currentPrefix + name, Help: help}, append([]string{"nodewright_name"}, labels...)),
		legacy:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: legacyPrefix + name, Help: legacyHelp}, append([]string{"skyhook_name"}, labels...)),
	}
}

// nodeWrightGauges are NodeWright's gauges in one registry, and which kind
// of rollout each name's series belong to.
type nodeWrightGauges struct {
	registry prometheus.Registerer
	// mu orders the writes of each rollout's series with another kind's
	// forgetting them (the two kinds have a controller each).
	mu        sync.Mutex
	legacy    bool              // the skyhook_* half is published
	owners    map[string]string // rollout name: the kind (RolloutKind.Kind) whose series they are
	published gaugeset.Published

	status, nodeStatus, target, pkgState, pkgStage, restarts                      *twinGauge
	matched, ceiling, inProgress, completed, percent, batch, failures, shouldStop *twinGauge
}

// newNodeWrightGauges makes NodeWright's gauges and registers both halves
// in reg.
func newNodeWrightGauges(reg prometheus.Registerer) *nodeWrightGauges {
	pv := []string{"package_name", "package_version"}
	c := []string{"policy_name", "compartment_name", "strategy"}
	g := &nodeWrightGauges{
		registry:   reg,
		legacy:     true,
		owners:     map[string]string{},
		status:     newTwinGauge("status", "1 for the rollout's current status, 0 for the others.", "status"),
		nodeStatus: newTwinGauge("node_status_count", "Selected nodes of the rollout by status.", "status"),
		target:     newTwinGauge("node_target_count", "Nodes the rollout selects."),
		pkgState:   newTwinGauge("package_state_count", "Nodes by the state of the package.", append(pv, "state")...),
		pkgStage:   newTwinGauge("package_stage_count", "Nodes by the stage of the package.", append(pv, "stage")...),
		restarts:   newTwinGauge("package_restarts_count", "Retries of the package's stages, summed over the nodes.", pv...),
		matched:    newTwinGauge("rollout_matched_nodes", "Nodes of the compartment.", c...),
		ceiling:    newTwinGauge("rollout_ceiling", "Most nodes of the compartment in progress at once.", c...),
		inProgress: newTwinGauge("rollout_in_progress", "Nodes of the compartment in progress.", c...),
		completed:  newTwinGauge("rollout_completed", "Complete nodes of the compartment.", c...),
		percent:    newTwinGauge("rollout_progress_percent", "Complete nodes of the compartment, in percent.", c...),
		batch:      newTwinGauge("rollout_current_batch", "The compartment's current batch (0 without batches).", c...),
		failures:   newTwinGauge("rollout_consecutive_failures", "Failed batches in a row in the compartment.", c...),
		shouldStop: newTwinGauge("rollout_should_stop", "1 while the compartment is halted.", c...),
	}
	for _, t := range g.all() {
		reg.MustRegister(t.current, t.legacy)
	}
	return g
}

func (g *nodeWrightGauges) all() []*twinGauge {
	return []*twinGauge{g.status, g.nodeStatus, g.target, g.pkgState, g.pkgStage, g.restarts,
		g.matched, g.ceiling, g.inProgress, g.completed, g.percent, g.batch, g.failures, g.shouldStop}
}

// dropLegacy unregisters the skyhook_* half, so that it leaves the
// metrics endpoint rather than showing stale values, and stops writing it.
// There is no way back: it is a setting of the operator's start.
func (g *nodeWrightGauges) dropLegacy() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.legacy = false
	for _, t := range g.all() {
		g.registry.Unregister(t.legacy)
		t.legacy.Reset()
	}
}

// replace sets the rollout's series anew: write sets them, and those it
// does not set (a version or stage gone, a compartment removed) are gone.
func (g *nodeWrightGauges) replace(rollout skyhookv1.RolloutRef, write func(nodeWrightSeries)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.owners[rollout.Name] = rollout.Kind.Kind
	g.published.Replace(rollout.Name, g.staged(rollout, write))
}

// update sets some of the rollout's series and keeps the others; those
// another kind left under the name (before a handover) go.
func (g *nodeWrightGauges) update(rollout skyhookv1.RolloutRef, write func(nodeWrightSeries)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	series := g.staged(rollout, write)
	if owner, ok := g.owners[rollout.Name]; ok && owner != rollout.Kind.Kind {
		g.published.Replace(rollout.Name, series)
	} else {
		g.published.Merge(rollout.Name, series)
	}
	g.owners[rollout.Name] = rollout.Kind.Kind
}

// staged is what write sets of the rollout's series, not yet published.
func (g *nodeWrightGauges) staged(rollout skyhookv1.RolloutRef, write func(nodeWrightSeries)) *gaugeset.Batch {
	s := nodeWrightSeries{name: rollout.Name, legacy: g.legacy, batch: &gaugeset.Batch{}}
	write(s)
	return s.batch
}

// forget removes the rollout's series, both halves, unless the name's are
// another kind's: its twin leads and publishes them.
func (g *nodeWrightGauges) forget(rollout skyhookv1.RolloutRef) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if owner, ok := g.owners[rollout.Name]; !ok || owner != rollout.Kind.Kind {
		return
	}
	g.published.Forget(rollout.Name) // also a dropped legacy half's: deleting from an empty vector does nothing
	delete(g.owners, rollout.Name)
}

// nodeWrightSeries stages one rollout's series, in both halves unless the
// legacy one is dropped.
type nodeWrightSeries struct {
	name   string
	legacy bool
	batch  *gaugeset.Batch
}

func (s nodeWrightSeries) set(t *twinGauge, v float64, labels ...string) {
	values := append([]string{s.name}, labels...)
	s.batch.Set(t.current, v, values...)
	if s.legacy {
		s.batch.Set(t.legacy, v, values...)
	}
}

func (s nodeWrightSeries) add(t *twinGauge, v float64, labels ...string) {
	values := append([]string{s.name}, labels...)
	s.batch.Add(t.current, v, values...)
	if s.legacy {
		s.batch.Add(t.legacy, v, values...)
	}
}

// nodeWright holds NodeWright's gauges on the operator's metrics endpoint
// (controller-runtime's registry).
var nodeWright = newNodeWrightGauges(metrics.Registry)

// UnpublishLegacyMetrics drops NodeWright's deprecated skyhook_* names of
// its gauges, keeping their nodewright_* names: NodeWright's
// PUBLISH_LEGACY_METRICS=false, read once at the start. It concerns the
// whole process and cannot be undone.
func UnpublishLegacyMetrics() { nodeWright.dropLegacy() }

// legacyPolicyName is NodeWright's policy_name for a rollout with an
// interruption budget instead of a DeploymentPolicy.
const legacyPolicyName = "legacy"

// statuses are the summary statuses, each of which gets a series.
var statuses = []skyhookv1.Status{skyhookv1.StatusUnknown, skyhookv1.StatusComplete, skyhookv1.StatusBlocked, skyhookv1.StatusWaiting,
	skyhookv1.StatusDisabled, skyhookv1.StatusPaused, skyhookv1.StatusInProgress, skyhookv1.StatusErroring}

// observeUpstream sets NodeWright's gauges of the rollout from a pass's
// view.
func observeUpstream(sk *skyhookv1.Skyhook, view *fleetView, p report.Progress, policy *skyhookv1.DeploymentPolicy) {
	g := nodeWright
	g.replace(skyhookv1.RefOf(sk), func(s nodeWrightSeries) {
		g.setStatus(s, sk.Status.Status)
		for _, status := range statuses {
			n := view.Index.Count(status)
			if status == skyhookv1.StatusBlocked {
				n += p.Ignored + len(p.Malformed) // not among the work; NodeWright counts them blocked
			}
			s.set(g.nodeStatus, float64(n), string(status))
		}
		s.set(g.target, float64(p.Selected+p.Ignored))
		for t, n := range view.Index.Tallies() {
			s.add(g.pkgState, float64(n), t.Name, t.Version, string(t.State))
			s.add(g.pkgStage, float64(n), t.Name, t.Version, string(t.Stage))
		}
		for pv, n := range view.Index.Restarts() {
			s.add(g.restarts, float64(n), pv[0], pv[1])
		}
		policyName := legacyPolicyName
		if sk.Spec.DeploymentPolicy != "" {
			policyName = sk.Spec.DeploymentPolicy
		}
		for name, c := range sk.Status.CompartmentStatuses {
			labels := []string{policyName, name, strategyType(policy, name)}
			s.set(g.matched, float64(c.Matched), labels...)
			s.set(g.ceiling, float64(c.Ceiling), labels...)
			s.set(g.inProgress, float64(c.InProgress), labels...)
			s.set(g.completed, float64(c.Completed), labels...)
			s.set(g.percent, float64(c.ProgressPercent), labels...)
			var batch, failures, stop float64
			if b := c.BatchState; b != nil {
				batch, failures = float64(b.CurrentBatch), float64(b.ConsecutiveFailures)
				if b.ShouldStop {
					stop = 1
				}
			}
			s.set(g.batch, batch, labels...)
			s.set(g.failures, failures, labels...)
			s.set(g.shouldStop, stop, labels...)
		}
	})
}

// strategyType names the compartment's strategy as NodeWright's strategy
// label does: fixed, linear, exponential; a budget counts as fixed.
func strategyType(policy *skyhookv1.DeploymentPolicy, name string) string {
	if policy == nil {
		return "fixed"
	}
	_, s := compartment.Settings(policy, name)
	switch {
	case s == nil:
		return "unknown"
	case s.Linear != nil:
		return "linear"
	case s.Exponential != nil:
		return "exponential"
	case s.Fixed != nil:
		return "fixed"
	}
	return "unknown"
}

// observeStatus sets the status gauge of a rollout that has no pass (a
// disabled one): 1 for its status, 0 for the others.
func observeStatus(rollout skyhookv1.RolloutRef, current skyhookv1.Status) {
	nodeWright.update(rollout, func(s nodeWrightSeries) { nodeWright.setStatus(s, current) })
}

func (g *nodeWrightGauges) setStatus(s nodeWrightSeries, current skyhookv1.Status) {
	for _, status := range statuses {
		v := 0.0
		if status == current {
			v = 1
		}
		s.set(g.status, v, string(status))
	}
}

// observeDisabled reports a disabled rollout's nodes as NodeWright does:
// the selected nodes are its target, each disabled.
func observeDisabled(sk *skyhookv1.Skyhook, selected int) {
	g := nodeWright
	g.update(skyhookv1.RefOf(sk), func(s nodeWrightSeries) {
		s.set(g.target, float64(selected))
		for _, status := range statuses {
			v := 0.0
			if status == skyhookv1.StatusDisabled {
				v = float64(selected)
			}
			s.set(g.nodeStatus, v, string(status))
		}
	})
}
