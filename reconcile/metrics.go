package reconcile

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/gaugeset"
	"github.com/skyhook-go/skyhook/reconcile/memory"
	"github.com/skyhook-go/skyhook/reconcile/report"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// This project's rollout metrics, in controller-runtime's registry (served
// with its reconcile durations and work-queue metrics on the metrics
// endpoint). The label skyhook is the rollout's name, whichever its kind,
// and rollout_kind its kind: NodeWright for a NodeWright's, empty for a
// Skyhook's. Empty because Prometheus stores a label with an empty value as
// no label at all, so a Skyhook's series are the same series as before
// NodeWrights were counted (no break in their history, no rule to rewrite),
// and rollout_kind="" still selects them. A name has one series set: a
// Skyhook and a NodeWright of one name are one rollout, and only the one
// that leads publishes.
var (
	nodesGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_nodes",
		Help: "Selected nodes of a rollout (Skyhook or NodeWright) by status (complete, in_progress, waiting, blocked by taints, ignored).",
	}, ownLabels("status"))
	packagesGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_packages",
		Help: "Package records on the nodes of a rollout by package, version, stage and state.",
	}, ownLabels("package", "version", "stage", "state"))
	budgetGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_rollout_budget",
		Help: "The most nodes a rollout may work on at once (interruption budget; with a DeploymentPolicy see skyhook_compartment_*).",
	}, ownLabels())
	compartmentNodesGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_compartment_nodes",
		Help: "Nodes of a rollout in a DeploymentPolicy compartment by status (all, complete, in_progress).",
	}, ownLabels("compartment", "status"))
	compartmentBatchGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_compartment_batch",
		Help: "Number of the compartment's current batch.",
	}, ownLabels("compartment"))
	compartmentBatchSizeGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_compartment_batch_size",
		Help: "Size the compartment's current batch opened with (0 before the first batch and after a reset).",
	}, ownLabels("compartment"))
	compartmentFailuresGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_compartment_consecutive_failures",
		Help: "Batches in a row that ended below the strategy's batchThreshold before its safetyLimit.",
	}, ownLabels("compartment"))
	compartmentHaltedGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_compartment_halted",
		Help: "1 while the compartment is halted by its failureThreshold.",
	}, ownLabels("compartment"))

	passesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skyhook_passes_total",
		Help: "Rollout passes by kind of pass: full (every selected node visited) or incremental (the changed and due nodes and the queue head).",
	}, ownLabels("kind"))
	nodesVisited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skyhook_pass_nodes_visited_total",
		Help: "Nodes the rollout passes read and judged again.",
	}, ownLabels())

	yieldedGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_nodes_yielded",
		Help: "Nodes of a rollout that gave their budget slot back to workloads that must not be interrupted (drain.onTimeout Yield).",
	}, ownLabels())
	yieldedSinceGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "skyhook_nodes_yielded_since_seconds",
		Help: "Unix time since which the longest-waiting node that yielded to workloads has waited; absent when none waits.",
	}, ownLabels())
	allGauges = []*prometheus.GaugeVec{nodesGauge, packagesGauge, budgetGauge, compartmentNodesGauge,
		compartmentBatchGauge, compartmentBatchSizeGauge, compartmentFailuresGauge, compartmentHaltedGauge, yieldedGauge, yieldedSinceGauge}
)

// Stage pods' ends, each counted once (stageEnds): how long they ran and
// how many failed. Counters and histograms outlive a pass, so they are only
// dropped with the rollout (forgetMetrics).
var (
	stageDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "skyhook_stage_duration_seconds",
		Help:    "How long stage pods ran, from creation to the end of their last container, by result (succeeded, failed).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 14), // 1 s to 2.3 h
	}, ownLabels("package", "stage", "result"))
	stageFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "skyhook_stage_failures_total",
		Help: "Stage pods that failed (a step's non-zero exit, a check, the stage timeout), by package and stage.",
	}, ownLabels("package", "stage"))
)

// ownLabels are the label names of a metric of this project's: the
// rollout's name and kind, then more.
func ownLabels(more ...string) []string { return append([]string{"skyhook", "rollout_kind"}, more...) }

// ownValues are the values of ownLabels for the rollout.
func ownValues(rollout skyhookv1.RolloutRef, more ...string) []string {
	return append([]string{rollout.Name, kindLabel(rollout.Kind)}, more...)
}

// kindLabel is the rollout_kind of a kind's rollouts: empty for the seeds'
// Skyhooks, whose series keep the labels they had before.
func kindLabel(kind skyhookv1.RolloutKind) string {
	if kind == skyhookv1.Skyhooks {
		return ""
	}
	return kind.Kind
}

// observeStageEnd records a stage pod of the rollout that ended, once per
// pod.
func (r *SkyhookReconciler) observeStageEnd(sk *skyhookv1.Skyhook, pkg string, pod *corev1.Pod, ended skyhookv1.Stage, result stagepod.Result) {
	// Keyed by package too: a pod of several packages ends each one's stages.
	if result == stagepod.Running || !r.memory.StageEnds.First(sk.UID, pod.UID+types.UID("/"+pkg+"/"+string(ended))) {
		return
	}
	rollout := skyhookv1.RefOf(sk)
	stage := string(ended)
	seconds := stagepod.StageSeconds(pod, ended, time.Now())
	label := "succeeded"
	switch result {
	case stagepod.Succeeded:
	case stagepod.Disrupted:
		label = "disrupted"
	case stagepod.Refused:
		label = "refused"
	default:
		label = "failed"
		stageFailures.WithLabelValues(ownValues(rollout, pkg, stage)...).Inc()
	}
	stageDuration.WithLabelValues(ownValues(rollout, pkg, stage, label)...).Observe(max(seconds, 0))
}

// observePass counts a pass of the rollout and the nodes it visited.
func observePass(rollout skyhookv1.RolloutRef, full bool, visited int) {
	passesTotal.WithLabelValues(ownValues(rollout, passKind(full))...).Inc()
	nodesVisited.WithLabelValues(ownValues(rollout)...).Add(float64(visited))
}

func init() {
	for _, g := range allGauges {
		metrics.Registry.MustRegister(g)
	}
	metrics.Registry.MustRegister(stageDuration, stageFailures, passesTotal, nodesVisited, remembered)
}

// observe sets a rollout's gauges, this project's and NodeWright's, from a
// pass's view; policy is its DeploymentPolicy, nil for none.
func observe(sk *skyhookv1.Skyhook, view *fleetView, p report.Progress, capacity int, policy *skyhookv1.DeploymentPolicy) {
	rollout := skyhookv1.RefOf(sk)
	var series gaugeset.Batch // a stage or version that is gone must not linger: the pass's series replace the last pass's
	set := func(g *prometheus.GaugeVec, v float64, labels ...string) {
		series.Set(g, v, ownValues(rollout, labels...)...)
	}
	tainted := len(p.Blocked) - p.Ignored
	waiting := p.Selected - p.Complete - p.Active - tainted
	set(nodesGauge, float64(p.Complete), "complete")
	set(nodesGauge, float64(p.Active), "in_progress")
	set(nodesGauge, float64(max(0, waiting)), "waiting")
	set(nodesGauge, float64(tainted), "blocked")
	set(nodesGauge, float64(p.Ignored), "ignored")
	set(budgetGauge, float64(capacity))
	set(yieldedGauge, float64(p.Yielded))
	if p.Yielded > 0 {
		set(yieldedSinceGauge, float64(p.YieldedSince.Unix()))
	}
	for t, n := range view.Index.Tallies() {
		series.Add(packagesGauge, float64(n), ownValues(rollout, t.Name, t.Version, string(t.Stage), string(t.State))...)
	}
	for _, c := range sk.Status.Compartments {
		set(compartmentNodesGauge, float64(c.Nodes), c.Name, "all")
		set(compartmentNodesGauge, float64(c.Complete), c.Name, "complete")
		set(compartmentNodesGauge, float64(c.InProgress), c.Name, "in_progress")
		set(compartmentBatchGauge, float64(c.Batch), c.Name)
		set(compartmentBatchSizeGauge, float64(c.BatchSize), c.Name)
		set(compartmentFailuresGauge, float64(c.ConsecutiveFailures), c.Name)
		halted := 0.0
		if c.Halted {
			halted = 1
		}
		set(compartmentHaltedGauge, halted, c.Name)
	}
	ownGauges.Replace(ownerOf(rollout), &series)
	observeUpstream(sk, view, p, policy)
}

// forgetMetrics removes every series of a rollout: its gauges, its stage
// and pass counters, NodeWright's gauges of its name unless its twin
// publishes them.
func forgetMetrics(rollout skyhookv1.RolloutRef) {
	forgetGauges(rollout)
	for _, c := range []interface{ DeletePartialMatch(prometheus.Labels) int }{stageDuration, passesTotal, nodesVisited, stageFailures} {
		c.DeletePartialMatch(rolloutSeries(rollout))
	}
	nodeWright.forget(rollout)
}

// ownGauges are the series of this project's gauges each rollout has.
var ownGauges gaugeset.Published

// ownerOf names a rollout's series among ownGauges: a twin's of the same
// name are apart (their rollout_kind differs).
func ownerOf(rollout skyhookv1.RolloutRef) string {
	return kindLabel(rollout.Kind) + "/" + rollout.Name
}

// forgetGauges removes the rollout's series of this project's gauges; a
// twin's of the same name stay.
func forgetGauges(rollout skyhookv1.RolloutRef) { ownGauges.Forget(ownerOf(rollout)) }

// rolloutSeries selects the rollout's series of this project's metrics.
func rolloutSeries(rollout skyhookv1.RolloutRef) prometheus.Labels {
	return prometheus.Labels{"skyhook": rollout.Name, "rollout_kind": kindLabel(rollout.Kind)}
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
