package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/report"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/reconcile/upstreamjob"
)

// interruptDue reports whether the package's next stage is an interrupt
// (after an install or upgrade, or after its uninstall).
func interruptDue(sk *skyhookv1.Skyhook, state skyhookv1.NodeState, config map[string]string, name string) bool {
	step := nextStep(sk, name, state, config)
	return step.Action == lifecycle.Run && lifecycle.IsInterrupt(step.Stage)
}

// othersRunning reports whether a package outside due runs a stage on the
// node: the interrupt waits for it, so that one interrupt serves every
// package that needs one now.
func othersRunning(state skyhookv1.NodeState, due []string) bool {
	for _, e := range state {
		if lifecycle.IsInterrupt(e.Stage) || !(e.State == skyhookv1.StateInProgress || e.State == skyhookv1.StateErroring) {
			continue
		}
		if !slices.Contains(due, e.Name) {
			return true
		}
	}
	return false
}

// interruptOf is the interrupt a package due for one asks for: the one its
// changed configMap keys asked for, or its own.
func interruptOf(sk *skyhookv1.Skyhook, name string, config map[string]string) *skyhookv1.Interrupt {
	if marker := config[rerunKey(name)]; marker != "" {
		var in skyhookv1.Interrupt
		if json.Unmarshal([]byte(marker), &in) == nil {
			return &in
		}
	}
	if d := declared(sk, name); d != nil {
		return d.Interrupt
	}
	return nil
}

// interruptNode moves the node's interrupt one step: cordon, wait for pods
// matching podNonInterruptLabels, drain, run the merged interrupt, verify a
// reboot. It returns true once the interrupt is done, with the record to
// keep on the node (nil when done).
func (n *nodePass) interruptNode(ctx context.Context, due []string, rec *interrupt.Record) (bool, *interrupt.Record, error) {
	sk := n.sk
	if rec != nil && rec.Phase == interrupt.PhaseDrained {
		// Drained before the apply: the interrupt itself still waits for
		// the window, with the node kept cordoned.
		if n.windowClosed() {
			return false, rec, nil
		}
		rec = nil // a new record: the drain finds the node cordoned and empty
	}
	sort.Strings(due)
	keys, merged := n.enterInterrupt(due)
	n.interrupt = merged
	if !rec.For(sk.Generation, keys) {
		// A new interrupt: it starts only inside the policy's window.
		if n.windowClosed() {
			return false, nil, nil
		}
		rec = &interrupt.Record{Generation: sk.Generation, Phase: interrupt.PhaseDrain, Since: time.Now().UTC(), Packages: keys, Interrupt: *merged}
	}
	switch rec.Phase {
	case interrupt.PhaseSkipped:
		return false, rec, nil // reported by skippedDrain once its status says blocked
	case interrupt.PhaseDrainTimedOut:
		return n.drainStopped(rec)
	case interrupt.PhaseDrain:
		return n.drainNode(ctx, rec)
	case interrupt.PhaseYielded: // admitted again: a try
		return n.drainNode(ctx, retryAfterYield(rec))
	case interrupt.PhaseInterrupt:
		return n.runInterrupt(ctx, due, rec)
	case interrupt.PhaseVerify:
		return n.verifyReboot(keys, rec)
	}
	return false, rec, nil
}

// windowClosed reports whether the policy's interrupt window is closed now;
// the node then counts as waiting for it to open.
func (n *nodePass) windowClosed() bool {
	now := time.Now()
	if n.window == nil || n.window.Contains(now) {
		return false
	}
	n.progress.WaitsForWindow(n.window.Next(now), now)
	return true
}

// enterInterrupt records the packages due in their interrupt stage and
// returns their record keys and the one interrupt that serves them all.
func (n *nodePass) enterInterrupt(due []string) ([]string, *skyhookv1.Interrupt) {
	keys := make([]string, len(due))
	var asked []skyhookv1.Interrupt
	for i, name := range due {
		d := declared(n.sk, name)
		keys[i] = skyhookv1.NodeStateKey(name, d.Version)
		if in := interruptOf(n.sk, name, n.config); in != nil {
			asked = append(asked, *in)
		}
		entry := n.state[keys[i]]
		entry.Stage = nextStep(n.sk, name, n.state, n.config).Stage // interrupt or uninstall-interrupt
		if entry.State != skyhookv1.StateErroring && entry.State != skyhookv1.StateInProgress {
			entry.State, entry.Restarts = skyhookv1.StateInProgress, 0
		}
		n.state[keys[i]] = entry
	}
	merged := interrupt.Merge(asked)
	if merged == nil {
		merged = &skyhookv1.Interrupt{Type: skyhookv1.InterruptNoop}
	}
	return keys, merged
}

// runInterrupt runs the merged interrupt as one stage pod (labelled with
// the first package due) and follows it.
func (n *nodePass) runInterrupt(ctx context.Context, due []string, rec *interrupt.Record) (bool, *interrupt.Record, error) {
	first, step, pod := n.interruptPod(due)
	if pod == nil {
		return false, rec, n.createStagePod(ctx, first, step, n.state[skyhookv1.NodeStateKey(first, step.Version)].Restarts)
	}
	switch outcome := n.outcome(first, pod, stagepod.Stages(pod)[0]); outcome.Result {
	case stagepod.Running:
		if down, _ := notReadySince(n.work.node); down && rec.Interrupt.Type == skyhookv1.InterruptReboot {
			// The machine went down as it rebooted: its pod cannot say
			// it ended until it is back.
			n.awaitReboot(rec.Packages, rec)
		}
		return false, rec, nil
	case stagepod.Succeeded:
		if rec.Interrupt.Type == skyhookv1.InterruptReboot && !upstreamjob.Interrupted(pod) {
			return n.startVerify(rec)
		}
		return finishInterrupt(n.state, rec.Packages), nil, nil
	case stagepod.Disrupted, stagepod.Refused:
		return n.interruptNotRun(ctx, failedTry{pod: pod, name: first, step: step, message: fmt.Sprintf("interrupt %s for %s: %s",
			rec.Interrupt.Type, strings.Join(rec.Packages, ", "), outcome.Message)}, rec, outcome.Result)
	default:
		if n.rebootedSince(rec) {
			return n.startVerify(rec) // the reboot asked for happened, and took the pod with it
		}
		markErroring(n.state, rec.Packages)
		// An interrupt under way is followed through, paused or not.
		err := n.failed(ctx, failedTry{pod: pod, name: first, step: step, message: fmt.Sprintf("interrupt %s for %s: %s (logs: %s)",
			rec.Interrupt.Type, strings.Join(rec.Packages, ", "), outcome.Message, logsHint(pod, outcome.Container))}, true)
		if !n.retrying[skyhookv1.NodeStateKey(first, step.Version)] {
			n.reportRestartLimit(rec)
			return false, rec, err
		}
		for _, key := range rec.Packages {
			n.retrying[key] = true
		}
		return false, rec, err
	}
}

// interruptNotRun follows an interrupt pod that ran nothing of the
// packages' (taken away, or not admitted by the kubelet): as a stage's
// (notRun), not their failure, and run again even while paused, since an
// interrupt under way is followed through. A reboot interrupt's pod is
// taken away by the very reboot it asked for when the kubelet shuts the
// node down gracefully: a node shutting down, or back with a new boot ID,
// is rebooting, which is verified (back Ready with a new boot ID within
// the reboot timeout), never asked for again.
func (n *nodePass) interruptNotRun(ctx context.Context, try failedTry, rec *interrupt.Record, result stagepod.Result) (bool, *interrupt.Record, error) {
	if n.rebootedSince(rec) || (rec.Interrupt.Type == skyhookv1.InterruptReboot && stagepod.EndedByNodeShutdown(try.pod)) {
		return n.startVerify(rec)
	}
	for _, key := range rec.Packages {
		entry := n.state[key]
		entry.State = skyhookv1.StateInProgress
		n.state[key] = entry
	}
	return false, rec, n.notRun(ctx, try, result, true)
}

// startVerify moves the reboot interrupt to its verification, timed from
// now, and takes its first look.
func (n *nodePass) startVerify(rec *interrupt.Record) (bool, *interrupt.Record, error) {
	rec.Phase, rec.Since = interrupt.PhaseVerify, time.Now().UTC()
	return n.verifyReboot(rec.Packages, rec)
}

// rebootedSince reports whether the record's interrupt is a reboot and the
// node has booted since it started.
func (n *nodePass) rebootedSince(rec *interrupt.Record) bool {
	boot := n.work.node.Status.NodeInfo.BootID
	return rec.Interrupt.Type == skyhookv1.InterruptReboot && rec.BootID != "" && boot != "" && boot != rec.BootID
}

// reportRestartLimit records, as NodeWright v0.20 does when a non-reboot
// interrupt failed its last allowed try, a Warning event (reason
// Interrupt, action RestartLimitExceeded) on the node and on the rollout.
func (n *nodePass) reportRestartLimit(rec *interrupt.Record) {
	if rec.LimitReported {
		return
	}
	rec.LimitReported = true
	note := fmt.Sprintf("interrupt %s for %s on node %s failed %d times and is given up; the node is erroring",
		rec.Interrupt.Type, strings.Join(rec.Packages, ", "), n.work.node.Name, n.r.MaxAttempts)
	n.r.Recorder.Eventf(n.work.node, n.sk, corev1.EventTypeWarning, "Interrupt", "RestartLimitExceeded", "%s", note)
	n.r.Recorder.Eventf(n.sk, nil, corev1.EventTypeWarning, "Interrupt", "RestartLimitExceeded", "%s", note)
}

// interruptPod is the stage pod of the node's interrupt, filed under the
// first package due (this operator's) or under any of them (NodeWright's
// Job, which names one of the packages it serves), with that package and
// its step; without one, the first package and its step, to start it.
func (n *nodePass) interruptPod(due []string) (string, lifecycle.Step, *corev1.Pod) {
	var first lifecycle.Step
	for i, name := range due {
		d := declared(n.sk, name)
		stage := n.state[skyhookv1.NodeStateKey(name, d.Version)].Stage // interrupt or uninstall-interrupt (enterInterrupt)
		step := lifecycle.Step{Action: lifecycle.Run, Stage: stage, Version: d.Version, Image: d.Image}
		if i == 0 {
			first = step
		}
		if pod := stagePodFor(n.sk, name, n.work.pods[name], step); pod != nil {
			return name, step, pod
		}
	}
	return due[0], first, nil
}

// verifyReboot counts a reboot as done only when the node is back Ready
// with a new boot ID; past the reboot timeout the packages are erroring
// (and still complete if the node comes back later).
func (n *nodePass) verifyReboot(keys []string, rec *interrupt.Record) (bool, *interrupt.Record, error) {
	node := n.work.node
	if node.Status.NodeInfo.BootID != rec.BootID && ready(node) == corev1.ConditionTrue {
		return finishInterrupt(n.state, keys), nil, nil
	}
	n.awaitReboot(keys, rec)
	return false, rec, nil
}

// awaitReboot waits for a node whose reboot is under way, from the
// record's start: while it is down it is named with since when; past the
// reboot timeout its packages are erroring (and still complete if it comes
// back later).
func (n *nodePass) awaitReboot(keys []string, rec *interrupt.Record) {
	node, timeout := n.work.node, n.r.RebootTimeout
	left := timeout - time.Since(rec.Since)
	down, downSince := notReadySince(node)
	if left > 0 {
		if down {
			n.progress.NodeRebooting(node.Name, fmt.Sprintf("rebooting for its interrupt since %s, NotReady since %s; erroring if not back Ready with a new boot ID by %s",
				stamp(rec.Since), stamp(downSince), stamp(rec.Since.Add(timeout))))
		}
		n.progress.RequeueIn(left)
		return
	}
	markErroring(n.state, keys)
	// No "ago": the status is not rewritten as time passes.
	message := fmt.Sprintf("rebooting since %s and not back Ready with a new boot ID (was %s) within %s",
		stamp(rec.Since), rec.BootID, timeout)
	if down {
		message += "; NotReady since " + stamp(downSince)
	}
	n.progress.NodeErroring(node.Name, message)
}

// finishInterrupt records the interrupt complete for its packages, in the
// interrupt stage each is in (enterInterrupt).
func finishInterrupt(state skyhookv1.NodeState, keys []string) bool {
	for _, k := range keys {
		e := state[k]
		e.State, e.Restarts = skyhookv1.StateComplete, 0
		state[k] = e
	}
	return true
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

// installInterruptMarker is the rerun marker for the config stage of an
// install or upgrade whose configMap changed from ran (the hash the install
// ran with) to now: the package's own interrupt merged with what the
// changed keys' configInterrupts ask for, as JSON, or empty for none.
func installInterruptMarker(sk *skyhookv1.Skyhook, name, ran, now string) string {
	d := declared(sk, name)
	if d == nil {
		return ""
	}
	interrupts := interrupt.ForConfigChange(*d, stagepod.ChangedKeys(ran, now))
	if d.Interrupt != nil {
		interrupts = append(interrupts, *d.Interrupt)
	}
	merged := interrupt.Merge(interrupts)
	if merged == nil {
		return ""
	}
	encoded, err := json.Marshal(merged)
	if err != nil {
		return ""
	}
	return string(encoded)
}

// skippedDrain reports a node whose drain timed out in this generation with
// drain.onTimeout Skip: it is blocked, holds no budget slot, and is tried
// again with the next generation.
func (pass *rolloutPass) skippedDrain(w *nodeWork, p *report.Progress) bool {
	sk := pass.sk
	rec := interrupt.Read(w.node, pass.ref)
	if rec == nil || rec.Phase != interrupt.PhaseSkipped || rec.Generation != sk.Generation ||
		w.node.Labels[pass.ref.StatusKey()] != string(skyhookv1.StatusBlocked) {
		return false
	}
	w.now = skyhookv1.StatusBlocked
	pass.r.memory.Started.Remove(sk.UID, w.node.Name)
	p.NodeBlocked(w.node.Name, "drain timed out; skipped for this generation (drain.onTimeout: Skip)")
	return true
}
