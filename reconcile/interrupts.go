package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/timewindow"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/reconcile/drain"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// Defaults of the interrupt path.
const (
	defaultDrainTimeout  = 10 * time.Minute
	defaultRebootTimeout = 10 * time.Minute
	defaultStageTimeout  = time.Hour
	// drainRecheck is how often a drain looks again at the node's pods:
	// the operator does not watch pods outside its namespace.
	drainRecheck = 2 * time.Second
)

// drainReport says what holds a node's interrupt.
type drainReport struct {
	node     string
	blockers []drain.Blocker
}

// interruptDue reports whether the package's next stage is the interrupt.
func interruptDue(sk *skyhookv1.Skyhook, state skyhookv1.NodeState, config map[string]string, name string) bool {
	step := nextStep(sk, name, state, config)
	return step.Action == lifecycle.Run && step.Stage == skyhookv1.StageInterrupt
}

// othersRunning reports whether a package outside due runs a stage on the
// node: the interrupt waits for it, so that one interrupt serves every
// package that needs one now.
func othersRunning(state skyhookv1.NodeState, due []string) bool {
	for _, e := range state {
		if e.Stage == skyhookv1.StageInterrupt || !(e.State == skyhookv1.StateInProgress || e.State == skyhookv1.StateErroring) {
			continue
		}
		if !slices.Contains(due, e.Name) {
			return true
		}
	}
	return false
}

// interruptNode moves the node's interrupt one step: cordon, wait for pods
// matching podNonInterruptLabels, drain, run the merged interrupt, verify a
// reboot. It returns true once the interrupt is done, with the record to
// keep on the node (nil when done).
func (r *SkyhookReconciler) interruptNode(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, state skyhookv1.NodeState, config map[string]string, due []string, rec *interrupt.Record, p *progress) (bool, *interrupt.Record, error) {
	sort.Strings(due)
	keys := make([]string, len(due))
	var asked []skyhookv1.Interrupt
	for i, name := range due {
		d := declared(sk, name)
		keys[i] = skyhookv1.NodeStateKey(name, d.Version)
		if in := interruptOf(sk, name, config); in != nil {
			asked = append(asked, *in)
		}
		entry := state[keys[i]]
		entry.Stage = skyhookv1.StageInterrupt
		if entry.State != skyhookv1.StateErroring && entry.State != skyhookv1.StateInProgress {
			entry.State, entry.Restarts = skyhookv1.StateInProgress, 0
		}
		state[keys[i]] = entry
	}
	merged := interrupt.Merge(asked)
	if merged == nil {
		merged = &skyhookv1.Interrupt{Type: skyhookv1.InterruptNoop}
	}
	w.interrupt = merged
	if !rec.For(sk.Generation, keys) {
		// A new interrupt: it starts only inside the policy's window.
		if now := time.Now(); p.window != nil && !p.window.Contains(now) {
			next := p.window.Next(now)
			p.windowWaits++
			if p.nextWindow.IsZero() || next.Before(p.nextWindow) {
				p.nextWindow = next
			}
			p.requeue = minPositive(p.requeue, next.Sub(now))
			return false, nil, nil
		}
		rec = &interrupt.Record{Generation: sk.Generation, Phase: interrupt.PhaseDrain, Since: time.Now().UTC(), Packages: keys, Interrupt: *merged}
	}
	switch rec.Phase {
	case interrupt.PhaseSkipped:
		return false, rec, nil // reported by skippedDrain once its status says blocked
	case interrupt.PhaseDrain:
		return r.drainNode(ctx, sk, w, rec, p)
	case interrupt.PhaseInterrupt:
		return r.runInterrupt(ctx, sk, w, state, due, rec, p)
	case interrupt.PhaseVerify:
		return r.verifyReboot(sk, w, state, keys, rec, p)
	}
	return false, rec, nil
}

// drainNode cordons the node (signing the cordon), waits for pods that must
// not be interrupted, and evicts the rest; once the node is empty the
// interrupt pod starts.
func (r *SkyhookReconciler) drainNode(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, rec *interrupt.Record, p *progress) (bool, *interrupt.Record, error) {
	if !w.node.Spec.Unschedulable {
		patch, err := cordon.Patch(w.node, sk)
		if err != nil {
			return false, rec, err
		}
		if err := r.patchNode(ctx, w.node.Name, patch); err != nil {
			return false, rec, err
		}
		rec.Since = time.Now().UTC()
		return false, rec, nil // the node event brings the next step
	}
	timeout, onTimeout := drainOptions(sk)
	timedOut := time.Since(rec.Since) > timeout
	nonInterrupt, err := metav1.LabelSelectorAsSelector(&sk.Spec.PodNonInterruptLabels)
	if err != nil {
		return false, rec, err
	}
	res, err := drain.Step(ctx, r.Client, r.APIReader, w.node.Name, drain.Options{
		OperatorNamespace: r.Namespace, StagePodLabel: stagepod.SkyhookLabel, NonInterrupt: nonInterrupt,
		Force: timedOut && onTimeout == skyhookv1.DrainDelete,
	})
	if err != nil {
		return false, rec, err
	}
	if !res.Done() {
		p.drainBlocked = append(p.drainBlocked, drainReport{node: w.node.Name, blockers: res.Blockers})
		p.requeue = minPositive(p.requeue, drainRecheck)
		// Skip gives up on the node whatever holds it, pods matching
		// podNonInterruptLabels included: skipping disturbs nobody.
		if timedOut && onTimeout == skyhookv1.DrainSkip {
			rec.Phase = interrupt.PhaseSkipped
			return false, rec, r.releaseCordon(ctx, sk, w.node)
		}
		return false, rec, nil
	}
	rec.Phase, rec.Since, rec.BootID = interrupt.PhaseInterrupt, time.Now().UTC(), w.node.Status.NodeInfo.BootID
	return false, rec, nil // the interrupt pod starts in the next pass, after the record says drained
}

// runInterrupt runs the merged interrupt as one stage pod (labelled with
// the first package due) and follows it.
func (r *SkyhookReconciler) runInterrupt(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, state skyhookv1.NodeState, due []string, rec *interrupt.Record, p *progress) (bool, *interrupt.Record, error) {
	first := due[0]
	d := declared(sk, first)
	step := lifecycle.Step{Action: lifecycle.Run, Stage: skyhookv1.StageInterrupt, Version: d.Version, Image: d.Image}
	key := skyhookv1.NodeStateKey(first, d.Version)
	entry := state[key]
	pod := stagePodFor(sk, first, w.pods[first], step)
	if pod == nil {
		return false, rec, r.createStagePod(ctx, sk, w, first, step, entry.Restarts, p)
	}
	switch outcome := r.outcome(pod, p); outcome.Result {
	case stagepod.Running:
		return false, rec, nil
	case stagepod.Succeeded:
		if rec.Interrupt.Type == skyhookv1.InterruptReboot {
			rec.Phase, rec.Since = interrupt.PhaseVerify, time.Now().UTC()
			return r.verifyReboot(sk, w, state, rec.Packages, rec, p)
		}
		return finishInterrupt(state, rec.Packages), nil, nil
	default:
		for _, k := range rec.Packages {
			e := state[k]
			e.State = skyhookv1.StateErroring
			state[k] = e
		}
		p.erroring = append(p.erroring, skyhookv1.NodeAttention{Name: w.node.Name, Status: skyhookv1.StatusErroring,
			Message: fmt.Sprintf("interrupt %s for %s: %s (logs: %s)", rec.Interrupt.Type, strings.Join(rec.Packages, ", "), outcome.Message, logsHint(pod, outcome.Container))})
		entry = state[key]
		return false, rec, r.retry(ctx, sk, w, pod, first, step, &entry, state, key, true, p)
	}
}

// verifyReboot counts a reboot as done only when the node is back Ready
// with a new boot ID; past the reboot timeout the packages are erroring
// (and still complete if the node comes back later).
func (r *SkyhookReconciler) verifyReboot(sk *skyhookv1.Skyhook, w *nodeWork, state skyhookv1.NodeState, keys []string, rec *interrupt.Record, p *progress) (bool, *interrupt.Record, error) {
	if w.node.Status.NodeInfo.BootID != rec.BootID && ready(w.node) == corev1.ConditionTrue {
		return finishInterrupt(state, keys), nil, nil
	}
	left := r.RebootTimeout - time.Since(rec.Since)
	if left > 0 {
		p.requeue = minPositive(p.requeue, left)
		return false, rec, nil
	}
	for _, k := range keys {
		e := state[k]
		e.State = skyhookv1.StateErroring
		state[k] = e
	}
	p.erroring = append(p.erroring, skyhookv1.NodeAttention{Name: w.node.Name, Status: skyhookv1.StatusErroring,
		Message: fmt.Sprintf("rebooted %s ago and not back Ready with a new boot ID (was %s) within %s", time.Since(rec.Since).Round(time.Second), rec.BootID, r.RebootTimeout)})
	return false, rec, nil
}

// finishInterrupt records the interrupt complete for its packages.
func finishInterrupt(state skyhookv1.NodeState, keys []string) bool {
	for _, k := range keys {
		e := state[k]
		e.Stage, e.State, e.Restarts = skyhookv1.StageInterrupt, skyhookv1.StateComplete, 0
		state[k] = e
	}
	return true
}

// releaseCordon lifts the node's cordon when the Skyhook placed it.
func (r *SkyhookReconciler) releaseCordon(ctx context.Context, sk *skyhookv1.Skyhook, node *corev1.Node) error {
	patch, err := cordon.Release(node, sk)
	if err != nil || patch == nil {
		return err
	}
	return r.patchNode(ctx, node.Name, patch)
}

// patchNode sends a merge patch through a fresh object (the cached node
// must not be written into).
func (r *SkyhookReconciler) patchNode(ctx context.Context, name string, patch []byte) error {
	target := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return client.IgnoreNotFound(r.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch)))
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

// reportDrains sets the DrainBlocked condition naming the nodes whose
// interrupt waits and the pods that hold them, and lists those nodes among
// the ones needing attention.
func (r *SkyhookReconciler) reportDrains(sk *skyhookv1.Skyhook, reports []drainReport) {
	if len(reports) == 0 {
		conditions.Delete(sk, skyhookv1.DrainBlockedCondition)
		return
	}
	parts := make([]string, 0, min(len(reports), 10))
	for _, rep := range reports {
		var pods []string
		for _, b := range rep.blockers {
			pods = append(pods, b.Pod+" ("+b.Reason+")")
		}
		msg := "evicted pods still terminating"
		if len(pods) > 0 {
			msg = strings.Join(pods, ", ")
		}
		sk.Status.NodesNeedingAttention = append(sk.Status.NodesNeedingAttention, skyhookv1.NodeAttention{
			Name: rep.node, Status: skyhookv1.StatusBlocked, Message: "interrupt waits: " + msg})
		if len(parts) < 10 {
			parts = append(parts, rep.node+": "+msg)
		}
	}
	more := ""
	if len(reports) > 10 {
		more = fmt.Sprintf(" and %d more nodes", len(reports)-10)
	}
	conditions.MarkTrue(sk, skyhookv1.DrainBlockedCondition, "DrainBlocked", "%d nodes wait to be drained: %s%s", len(reports), strings.Join(parts, "; "), more)
}

// configInterruptMarker is the rerun marker for a config stage that ran
// with configMap hash ran after last: the merged interrupt the changed
// keys ask for, as JSON, or empty.
func configInterruptMarker(sk *skyhookv1.Skyhook, name, last, ran string) string {
	d := declared(sk, name)
	if d == nil {
		return ""
	}
	merged := interrupt.Merge(interrupt.ForConfigChange(*d, stagepod.ChangedKeys(last, ran)))
	if merged == nil {
		return ""
	}
	encoded, err := json.Marshal(merged)
	if err != nil {
		return ""
	}
	return string(encoded)
}

// interruptWindow is the window of the DeploymentPolicy, nil when there is
// none. Admission refuses windows that do not parse.
func interruptWindow(policy *skyhookv1.DeploymentPolicy) *timewindow.Window {
	if policy == nil || policy.Spec.InterruptWindow == nil {
		return nil
	}
	w := policy.Spec.InterruptWindow
	window, err := timewindow.Parse(w.Days, w.Start, w.End, w.TimeZone)
	if err != nil {
		return nil
	}
	return &window
}

// reportWindow sets the InterruptWindowClosed condition while nodes wait
// for the window, saying when it opens.
func reportWindow(sk *skyhookv1.Skyhook, waits int, next time.Time) {
	if waits == 0 {
		conditions.Delete(sk, skyhookv1.InterruptWindowClosedCondition)
		return
	}
	conditions.MarkTrue(sk, skyhookv1.InterruptWindowClosedCondition, "OutsideInterruptWindow",
		"%d nodes wait for the interrupt window of policy %s, which opens next at %s", waits, sk.Spec.DeploymentPolicy, next.UTC().Format(time.RFC3339))
}

// skippedDrain reports a node whose drain timed out in this generation with
// drain.onTimeout Skip: it is blocked, holds no budget slot, and is tried
// again with the next generation.
func (r *SkyhookReconciler) skippedDrain(sk *skyhookv1.Skyhook, w *nodeWork, p *progress) bool {
	rec := interrupt.Read(w.node, sk.Name)
	if rec == nil || rec.Phase != interrupt.PhaseSkipped || rec.Generation != sk.Generation ||
		w.node.Labels[skyhookv1.StatusKey(sk.Name)] != string(skyhookv1.StatusBlocked) {
		return false
	}
	w.now = skyhookv1.StatusBlocked
	r.started.remove(sk.UID, w.node.Name)
	p.blocked = append(p.blocked, skyhookv1.NodeAttention{Name: w.node.Name, Status: skyhookv1.StatusBlocked,
		Message: "drain timed out; skipped for this generation (drain.onTimeout: Skip)"})
	return true
}
