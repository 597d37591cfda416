package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/reconcile/drain"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/reconcile/report"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// The drain of a node before its interrupt (package drain decides each pod
// and removes it): cordon, wait, remove, the timeouts (NodeWright's
// drainConfig.timeout, this project's drain.timeout), and what the drain
// says: events, the status's blockers, and its marks on the node.
//
// A drain's marks on the node, as NodeWright v0.18+ writes them for its
// dashboards and runbooks: drainStart_<name> (when it began) and
// drainBlocked_<name> (the pods that block it, not the ones matching
// podNonInterruptLabels, which NodeWright reports as Blocked instead).
// Both go once the node is drained; after a drainConfig.timeout the last
// ones stay.

// Defaults of the drain.
const (
	defaultDrainTimeout = 10 * time.Minute
	// drainRecheck is how often a drain looks again at the node's pods:
	// the operator does not watch pods outside its namespace.
	drainRecheck = 2 * time.Second
)

// drainNode cordons the node (signing the cordon), waits for pods that must
// not be interrupted, and removes the rest; once the node is empty the
// interrupt pod starts. NodeWright's drainConfig.timeout ends a drain that
// takes longer with the node erroring and left cordoned; this operator's
// drain.timeout does what drain.onTimeout says.
func (n *nodePass) drainNode(ctx context.Context, rec *interrupt.Record) (bool, *interrupt.Record, error) {
	r, sk, node := n.r, n.sk, n.work.node
	if !node.Spec.Unschedulable {
		patch, err := cordon.Patch(node, sk)
		if err != nil {
			return false, rec, err
		}
		if err := r.patchNode(ctx, node.Name, patch); err != nil {
			return false, rec, err
		}
		rec.Since = time.Now().UTC()
		return false, rec, nil // the node event brings the next step
	}
	if limit := drainConfigTimeout(sk); limit > 0 && time.Since(rec.Since) > limit {
		return n.drainTimedOut(rec, limit)
	}
	timeout, onTimeout := drainOptions(sk)
	timedOut := time.Since(rec.Since) > timeout
	nonInterrupt, err := metav1.LabelSelectorAsSelector(&sk.Spec.PodNonInterruptLabels)
	if err != nil {
		return false, rec, err
	}
	res, err := drain.Step(ctx, r.Client, r.APIReader, node.Name, drain.Options{
		OperatorNamespace: r.Namespace, StagePodLabels: stagePodLabels(), NonInterrupt: nonInterrupt,
		Config: sk.Spec.DrainConfig, Force: timedOut && onTimeout == skyhookv1.DrainDelete, Throttle: r.throttle,
	})
	if err != nil {
		return false, rec, err
	}
	r.reportBarePods(sk, node.Name, res.EvictedBare)
	r.reportNonInterruptPods(sk, node, rec, res.Blockers)
	if !res.Done() {
		n.drain = &drainState{since: rec.Since, blockers: res.Blockers}
		n.progress.DrainWaits(node.Name, podBlockers(res.Blockers))
		n.progress.RequeueIn(drainRecheck)
		// Skip gives up on the node whatever holds it, pods matching
		// podNonInterruptLabels included: skipping disturbs nobody.
		if timedOut && onTimeout == skyhookv1.DrainSkip {
			rec.Phase = interrupt.PhaseSkipped
			return false, rec, r.releaseCordon(ctx, sk, node)
		}
		if yieldsNow(rec, onTimeout, timedOut, res.Blockers) {
			return n.yield(ctx, rec)
		}
		return false, rec, nil
	}
	rec.Phase, rec.Since, rec.BootID = interrupt.PhaseInterrupt, time.Now().UTC(), node.Status.NodeInfo.BootID
	return false, rec, nil // the interrupt pod starts in the next pass, after the record says drained
}

// drainTimedOut ends a drain past drainConfig.timeout as NodeWright v0.20
// does: a Warning event, the packages erroring, the node left cordoned,
// nothing more evicted (PhaseDrainTimedOut) until a reset or a new
// generation.
func (n *nodePass) drainTimedOut(rec *interrupt.Record, limit time.Duration) (bool, *interrupt.Record, error) {
	rec.Phase = interrupt.PhaseDrainTimedOut
	n.r.Recorder.Eventf(n.sk, nil, corev1.EventTypeWarning, "Drain", "DrainTimeout",
		"drain timed out on node %s after %s (drainConfig.timeout); the node stays cordoned and erroring: remove what blocks it, then reset the node", n.work.node.Name, limit)
	return n.drainStopped(rec)
}

// drainStopped is a node whose drain timed out: erroring, cordoned, its
// last blockers kept on the node and, as NodeWright v0.20 keeps them, in
// the rollout's DrainBlocked condition.
func (n *nodePass) drainStopped(rec *interrupt.Record) (bool, *interrupt.Record, error) {
	markErroring(n.state, rec.Packages)
	blockers := drainBlockersOf(n.work.node, n.ref)
	n.drain = &drainState{since: rec.Since, blockers: blockers, keep: true}
	if len(blockers) > 0 {
		n.progress.DrainWaits(n.work.node.Name, podBlockers(blockers))
	}
	n.progress.NodeErroring(n.work.node.Name, fmt.Sprintf("drain timed out after %s (drainConfig.timeout); the node stays cordoned until it is reset",
		drainConfigTimeout(n.sk)))
	return false, rec, nil
}

// drainConfigTimeout is NodeWright's drainConfig.timeout, 0 for none.
func drainConfigTimeout(sk *skyhookv1.Skyhook) time.Duration {
	if c := sk.Spec.DrainConfig; c != nil && c.Timeout != nil {
		return c.Timeout.Duration
	}
	return 0
}

// reportNonInterruptPods records, once per drain, a Warning event on the
// node naming the pods matching podNonInterruptLabels that hold it (the
// rollout's status says it with its Blocked condition).
func (r *SkyhookReconciler) reportNonInterruptPods(sk *skyhookv1.Skyhook, node *corev1.Node, rec *interrupt.Record, blockers []drain.Blocker) {
	var pods []string
	for _, b := range blockers {
		if b.Reason == drain.ReasonNonInterrupt {
			pods = append(pods, b.Pod())
		}
	}
	if len(pods) == 0 || rec.HeldReported {
		rec.HeldReported = rec.HeldReported && len(pods) > 0
		return
	}
	rec.HeldReported = true
	r.Recorder.Eventf(node, sk, corev1.EventTypeWarning, "Drain", report.NonInterruptPodsRunningReason,
		"%s %s waits to interrupt node %s until these pods matching podNonInterruptLabels end: %s",
		skyhookv1.KindOf(sk).Kind, sk.Name, node.Name, strings.Join(pods, ", "))
}

// podBlockers are the drain's blockers for the status.
func podBlockers(blockers []drain.Blocker) []report.PodBlocker {
	out := make([]report.PodBlocker, len(blockers))
	for i, b := range blockers {
		out[i] = report.PodBlocker{Namespace: b.Namespace, Name: b.Name, Reason: b.Reason, Detail: b.Detail}
	}
	return out
}

// stagePodLabels name the operator's stage pods of every kind, which a
// drain leaves on the node.
func stagePodLabels() []string {
	var out []string
	for _, kind := range skyhookv1.RolloutKinds {
		// <prefix>/name also marks the pods of NodeWright's stage Jobs,
		// which a takeover waits for (upstreamjob).
		out = append(out, stagepod.OwnerLabel(kind), kind.Prefix+"/name")
	}
	return out
}

// drainOptions are the Skyhook's drain timeout and what happens after it.
func drainOptions(sk *skyhookv1.Skyhook) (time.Duration, skyhookv1.DrainOnTimeout) {
	timeout, onTimeout := defaultDrainTimeout, skyhookv1.DrainWait
	if d := sk.Spec.Drain; d != nil {
		if d.Timeout != nil && d.Timeout.Duration > 0 {
			timeout = d.Timeout.Duration
		}
		if d.OnTimeout != "" {
			onTimeout = d.OnTimeout
		}
	}
	return timeout, onTimeout
}

// drainMarks are the drainStart_ and drainBlocked_ values for the node's
// record ("" removes them).
func (n *nodePass) drainMarks() (start, blocked string) {
	d := n.drain
	if d == nil {
		return "", ""
	}
	if d.keep {
		return n.work.node.Annotations[n.ref.DrainStartAnnotation()], n.work.node.Annotations[n.ref.DrainBlockedAnnotation()]
	}
	var shown []drain.Blocker
	for _, b := range d.blockers {
		if b.Reason != drain.ReasonNonInterrupt {
			shown = append(shown, b)
		}
	}
	if len(shown) > 0 {
		encoded, _ := json.Marshal(shown) // strings only: cannot fail
		blocked = string(encoded)
	}
	return d.since.UTC().Format(time.RFC3339Nano), blocked
}

// drainBlockersOf reads the blockers a drain's mark on the node names.
func drainBlockersOf(node *corev1.Node, ref skyhookv1.RolloutRef) []drain.Blocker {
	var blockers []drain.Blocker
	_ = json.Unmarshal([]byte(node.Annotations[ref.DrainBlockedAnnotation()]), &blockers) // unreadable: none named
	return blockers
}

// markErroring records the packages' interrupt erroring.
func markErroring(state skyhookv1.NodeState, keys []string) {
	for _, k := range keys {
		e := state[k]
		e.State = skyhookv1.StateErroring
		state[k] = e
	}
}
