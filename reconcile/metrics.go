package reconcile

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/compartment"
	"github.com/skyhook-go/skyhook/reconcile/memory"
	"github.com/skyhook-go/skyhook/reconcile/report"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
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

	passesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skyhook_passes_total",
		Help: "Rollout passes of a Skyhook by kind: full (every selected node visited) or incremental (the changed and due nodes and the queue head).",
	}, []string{"skyhook", "kind"})
	nodesVisited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skyhook_pass_nodes_visited_total",
		Help: "Nodes the rollout passes of a Skyhook read and judged again.",
	}, []string{"skyhook"})

	allGauges = []*prometheus.GaugeVec{nodesGauge, packagesGauge, budgetGauge, compartmentNodesGauge,
		compartmentBatchGauge, compartmentBatchSizeGauge, compartmentFailuresGauge, compartmentHaltedGauge}
)

// Stage pods' ends, each counted once (stageEnds): how long they ran and
// how many failed. Counters and histograms outlive a pass, so they are only
// dropped with the Skyhook (forgetStageMetrics).
var (
	stageDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "skyhook_stage_duration_seconds",
		Help:    "How long stage pods ran, from creation to the end of their last container, by result (succeeded, failed).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 14), // 1 s to 2.3 h
	}, []string{"skyhook", "package", "stage", "result"})
	stageFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skyhook_stage_failures_total",
		Help: "Stage pods that failed (a step's non-zero exit, a check, the stage timeout), by package and stage.",
	}, []string{"skyhook", "package", "stage"})
)

// published reports whether the metrics above and below have series for
// the kind's rollouts: a Skyhook's. NodeWright's own metric names
// (nodewright_*, labelled nodewright_name) are not published yet, and its
// rollouts are left out rather than counted under a Skyhook's name.
func published(kind skyhookv1.RolloutKind) bool { return kind == skyhookv1.Skyhooks }

// observeStageEnd records a stage pod of the Skyhook that ended, once per
// pod.
func (r *SkyhookReconciler) observeStageEnd(sk *skyhookv1.Skyhook, pkg string, pod *corev1.Pod, result stagepod.Result) {
	if result == stagepod.Running || !r.memory.StageEnds.First(sk.UID, pod.UID) || !published(skyhookv1.KindOf(sk)) {
		return
	}
	skyhook := sk.Name
	stage := pod.Labels[stagepod.StageLabel]
	seconds := stagepod.FinishedAt(pod, time.Now()).Sub(pod.CreationTimestamp.Time).Seconds()
	label := "succeeded"
	if result != stagepod.Succeeded {
		label = "failed"
		stageFailures.WithLabelValues(skyhook, pkg, stage).Inc()
	}
	stageDuration.WithLabelValues(skyhook, pkg, stage, label).Observe(max(seconds, 0))
}

// observePass counts a pass of the rollout and the nodes it visited.
func observePass(rollout skyhookv1.RolloutRef, full bool, visited int) {
	if !published(rollout.Kind) {
		return
	}
	passesTotal.WithLabelValues(rollout.Name, passKind(full)).Inc()
	nodesVisited.WithLabelValues(rollout.Name).Add(float64(visited))
}

// NodeWright's metrics, same names, labels and meaning, so that its Grafana
// dashboard and alerts work unchanged (docs/metrics.md). Its label for the
// Skyhook is skyhook_name.
var (
	upstreamStatus     = gauge("skyhook_status", "1 for the Skyhook's current status, 0 for the others.", "status")
	upstreamNodeStatus = gauge("skyhook_node_status_count", "Selected nodes of the Skyhook by status.", "status")
	upstreamTarget     = gauge("skyhook_node_target_count", "Nodes the Skyhook selects.")
	upstreamPkgState   = gauge("skyhook_package_state_count", "Nodes by the state of the package.", "package_name", "package_version", "state")
	upstreamPkgStage   = gauge("skyhook_package_stage_count", "Nodes by the stage of the package.", "package_name", "package_version", "stage")
	upstreamRestarts   = gauge("skyhook_package_restarts_count", "Retries of the package's stages, summed over the nodes.", "package_name", "package_version")

	rolloutLabels      = []string{"policy_name", "compartment_name", "strategy"}
	upstreamMatched    = gauge("skyhook_rollout_matched_nodes", "Nodes of the compartment.", rolloutLabels...)
	upstreamCeiling    = gauge("skyhook_rollout_ceiling", "Most nodes of the compartment in progress at once.", rolloutLabels...)
	upstreamInProgress = gauge("skyhook_rollout_in_progress", "Nodes of the compartment in progress.", rolloutLabels...)
	upstreamCompleted  = gauge("skyhook_rollout_completed", "Complete nodes of the compartment.", rolloutLabels...)
	upstreamPercent    = gauge("skyhook_rollout_progress_percent", "Complete nodes of the compartment, in percent.", rolloutLabels...)
	upstreamBatch      = gauge("skyhook_rollout_current_batch", "The compartment's current batch (0 without batches).", rolloutLabels...)
	upstreamFailures   = gauge("skyhook_rollout_consecutive_failures", "Failed batches in a row in the compartment.", rolloutLabels...)
	upstreamShouldStop = gauge("skyhook_rollout_should_stop", "1 while the compartment is halted.", rolloutLabels...)
	upstreamGauges     = []*prometheus.GaugeVec{upstreamStatus, upstreamNodeStatus, upstreamTarget, upstreamPkgState, upstreamPkgStage, upstreamRestarts,
		upstreamMatched, upstreamCeiling, upstreamInProgress, upstreamCompleted, upstreamPercent, upstreamBatch, upstreamFailures, upstreamShouldStop}
)

// gauge is a gauge of NodeWright's, labelled by skyhook_name first.
func gauge(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, append([]string{"skyhook_name"}, labels...))
}

// legacyPolicyName is NodeWright's policy_name for a Skyhook with an
// interruption budget instead of a DeploymentPolicy.
const legacyPolicyName = "legacy"

// statuses are the summary statuses, each of which gets a series.
var statuses = []skyhookv1.Status{skyhookv1.StatusUnknown, skyhookv1.StatusComplete, skyhookv1.StatusBlocked, skyhookv1.StatusWaiting,
	skyhookv1.StatusDisabled, skyhookv1.StatusPaused, skyhookv1.StatusInProgress, skyhookv1.StatusErroring}

func init() {
	for _, g := range append(append([]*prometheus.GaugeVec{}, allGauges...), upstreamGauges...) {
		metrics.Registry.MustRegister(g)
	}
	metrics.Registry.MustRegister(stageDuration, stageFailures, passesTotal, nodesVisited, remembered)
}

// observe sets a Skyhook's gauges from a pass's view; policy is its
// DeploymentPolicy, nil for none.
func observe(sk *skyhookv1.Skyhook, view *fleetView, p report.Progress, capacity int, policy *skyhookv1.DeploymentPolicy) {
	if !published(skyhookv1.KindOf(sk)) {
		return
	}
	forgetGauges(sk.Name) // a stage or version that is gone must not linger
	tainted := len(p.Blocked) - p.Ignored
	waiting := p.Selected - p.Complete - p.Active - tainted
	nodesGauge.WithLabelValues(sk.Name, "complete").Set(float64(p.Complete))
	nodesGauge.WithLabelValues(sk.Name, "in_progress").Set(float64(p.Active))
	nodesGauge.WithLabelValues(sk.Name, "waiting").Set(float64(max(0, waiting)))
	nodesGauge.WithLabelValues(sk.Name, "blocked").Set(float64(tainted))
	nodesGauge.WithLabelValues(sk.Name, "ignored").Set(float64(p.Ignored))
	budgetGauge.WithLabelValues(sk.Name).Set(float64(capacity))
	for t, n := range view.Index.Tallies() {
		packagesGauge.WithLabelValues(sk.Name, t.Name, t.Version, string(t.Stage), string(t.State)).Add(float64(n))
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
	observeUpstream(sk, view, p, policy)
}

// observeUpstream sets NodeWright's gauges from a pass's view.
func observeUpstream(sk *skyhookv1.Skyhook, view *fleetView, p report.Progress, policy *skyhookv1.DeploymentPolicy) {
	observeStatus(skyhookv1.RefOf(sk), sk.Status.Status)
	for _, s := range statuses {
		n := view.Index.Count(s)
		if s == skyhookv1.StatusBlocked {
			n += p.Ignored + len(p.Malformed) // not among the work; NodeWright counts them blocked
		}
		upstreamNodeStatus.WithLabelValues(sk.Name, string(s)).Set(float64(n))
	}
	upstreamTarget.WithLabelValues(sk.Name).Set(float64(p.Selected + p.Ignored))
	for t, n := range view.Index.Tallies() {
		upstreamPkgState.WithLabelValues(sk.Name, t.Name, t.Version, string(t.State)).Add(float64(n))
		upstreamPkgStage.WithLabelValues(sk.Name, t.Name, t.Version, string(t.Stage)).Add(float64(n))
	}
	for pv, n := range view.Index.Restarts() {
		upstreamRestarts.WithLabelValues(sk.Name, pv[0], pv[1]).Add(float64(n))
	}
	policyName := legacyPolicyName
	if sk.Spec.DeploymentPolicy != "" {
		policyName = sk.Spec.DeploymentPolicy
	}
	for name, c := range sk.Status.CompartmentStatuses {
		labels := []string{sk.Name, policyName, name, strategyType(policy, name)}
		upstreamMatched.WithLabelValues(labels...).Set(float64(c.Matched))
		upstreamCeiling.WithLabelValues(labels...).Set(float64(c.Ceiling))
		upstreamInProgress.WithLabelValues(labels...).Set(float64(c.InProgress))
		upstreamCompleted.WithLabelValues(labels...).Set(float64(c.Completed))
		upstreamPercent.WithLabelValues(labels...).Set(float64(c.ProgressPercent))
		var batch, failures, stop float64
		if b := c.BatchState; b != nil {
			batch, failures = float64(b.CurrentBatch), float64(b.ConsecutiveFailures)
			if b.ShouldStop {
				stop = 1
			}
		}
		upstreamBatch.WithLabelValues(labels...).Set(batch)
		upstreamFailures.WithLabelValues(labels...).Set(failures)
		upstreamShouldStop.WithLabelValues(labels...).Set(stop)
	}
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

// observeStatus sets skyhook_status: 1 for the Skyhook's status, 0 for the
// others (also for a disabled Skyhook, which has no pass).
func observeStatus(rollout skyhookv1.RolloutRef, current skyhookv1.Status) {
	if !published(rollout.Kind) {
		return
	}
	skyhook := rollout.Name
	for _, s := range statuses {
		v := 0.0
		if s == current {
			v = 1
		}
		upstreamStatus.WithLabelValues(skyhook, string(s)).Set(v)
	}
}

// observeDisabled reports a disabled Skyhook's nodes as NodeWright does:
// the selected nodes are its target, each disabled.
func observeDisabled(sk *skyhookv1.Skyhook, selected int) {
	if !published(skyhookv1.KindOf(sk)) {
		return
	}
	upstreamTarget.WithLabelValues(sk.Name).Set(float64(selected))
	for _, s := range statuses {
		v := 0.0
		if s == skyhookv1.StatusDisabled {
			v = float64(selected)
		}
		upstreamNodeStatus.WithLabelValues(sk.Name, string(s)).Set(v)
	}
}

// forgetMetrics removes every series of a rollout: its gauges, its stage
// and pass counters.
func forgetMetrics(rollout skyhookv1.RolloutRef) {
	if !published(rollout.Kind) {
		return
	}
	forgetGauges(rollout.Name)
	for _, c := range []interface{ DeletePartialMatch(prometheus.Labels) int }{stageDuration, passesTotal, nodesVisited, stageFailures} {
		c.DeletePartialMatch(prometheus.Labels{"skyhook": rollout.Name})
	}
}

// forgetGauges removes every gauge series of a Skyhook.
func forgetGauges(skyhook string) {
	labels := prometheus.Labels{"skyhook": skyhook}
	for _, g := range allGauges {
		g.DeletePartialMatch(labels)
	}
	upstream := prometheus.Labels{"skyhook_name": skyhook}
	for _, g := range upstreamGauges {
		g.DeletePartialMatch(upstream)
	}
}

// passKind labels a pass for skyhook_passes_total.
func passKind(full bool) string {
	if full {
		return "full"
	}
	return "incremental"
}

// remembered reports what the reconcilers of this process remember between
// passes (reconcile/memory), per Skyhook and store, read when scraped: a
// Skyhook that is gone has no series, and one that stays names what it
// left behind.
var remembered = &memoryCollector{memories: map[*memory.Memory[*nodeWork]]bool{}}

var memoryDesc = prometheus.NewDesc("skyhook_operator_memory_entries",
	"Entries the operator keeps between passes for a rollout (its kind and name; an empty kind and its UID when untracked), by store (see reconcile/memory); a deleted rollout has none.",
	[]string{"kind", "name", "store"}, nil)

// memoryCollector collects the memories of the reconcilers running in this
// process (one, but for tests that run several operators in one process:
// their entries add up).
type memoryCollector struct {
	mu       sync.Mutex
	memories map[*memory.Memory[*nodeWork]]bool
}

func (c *memoryCollector) Describe(ch chan<- *prometheus.Desc) { ch <- memoryDesc }

func (c *memoryCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	sum := map[[3]string]int{}
	for m := range c.memories {
		for _, h := range m.Held() {
			sum[[3]string{h.Kind, h.Name, h.Store}] += h.Entries
		}
	}
	c.mu.Unlock()
	for k, n := range sum {
		ch <- prometheus.MustNewConstMetric(memoryDesc, prometheus.GaugeValue, float64(n), k[0], k[1], k[2])
	}
}

// collectWhileRunning collects m until ctx ends (the manager stops): a
// runnable of every replica, leader or not.
type collectWhileRunning struct{ m *memory.Memory[*nodeWork] }

func (r collectWhileRunning) Start(ctx context.Context) error {
	remembered.mu.Lock()
	remembered.memories[r.m] = true
	remembered.mu.Unlock()
	<-ctx.Done()
	remembered.mu.Lock()
	delete(remembered.memories, r.m)
	remembered.mu.Unlock()
	return nil
}

func (collectWhileRunning) NeedLeaderElection() bool { return false }
