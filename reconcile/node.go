package reconcile

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/report"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// advance moves every package of the node as far as it can go now, in
// dependency order, and records the result on the node in one write.
func (n *nodePass) advance(ctx context.Context) error {
	due, err := n.advancePackages(ctx)
	if err != nil {
		return err
	}
	rec, err := n.followInterrupt(ctx, due)
	if err != nil {
		return err
	}
	if rec == nil {
		rec = n.early // a drain before a stage, under way or done
	}
	status := nodeStatus(n.sk, n.state, n.config, n.retrying)
	if rec != nil && rec.Phase == interrupt.PhaseSkipped {
		status = skyhookv1.StatusBlocked // given up for this generation (drain.onTimeout: Skip)
	}
	if rec.Yielded(n.sk.Generation) {
		status = skyhookv1.StatusWaiting // its slot given back to workloads (drain.onTimeout: Yield)
		n.progress.NodeYielded(rec.WaitingSince)
		n.progress.RequeueIn(yieldRecheck)
	}
	n.work.now, n.work.written = status, n.state
	if uninstalling, failing := report.CountUninstalls(n.sk, n.state); uninstalling {
		n.progress.Uninstalling++
		if failing {
			n.progress.UninstallFailing++
		}
	}
	if status == skyhookv1.StatusComplete {
		n.progress.NodeFinished()
		n.work.holding = n.work.hasPods() // the slot is held until they are gone

		n.r.memory.Started.Remove(n.sk.UID, n.work.node.Name)
	}
	if rec == nil || rec.Phase == interrupt.PhaseSkipped {
		// Not interrupting (any more): a cordon of this Skyhook's goes,
		// also one a crash left behind.
		if err := n.r.releaseCordon(ctx, n.sk, n.work.node); err != nil {
			return err
		}
	}
	encoded, err := interrupt.Encode(rec)
	if err != nil {
		return err
	}
	shown := status
	if n.paused {
		shown = skyhookv1.StatusPaused // as NodeWright marks every node of a paused Skyhook
	}
	drainStart, drainBlocked := n.drainMarks()
	return n.r.writeRecordAndConditions(ctx, n.sk, n.work, nodestate.Record{State: n.state, Config: n.config, Status: shown, Batch: n.work.batch, Interrupt: encoded,
		DrainStart: drainStart, DrainBlocked: drainBlocked, BootID: n.r.bootToAcknowledge(n.work.node)}, report.NodeConditions(skyhookv1.RefOf(n.sk), status, n.state))
}

// followInterrupt moves the node's interrupt for the packages due one
// step, once nothing else runs on the node (one interrupt serves them all);
// a paused Skyhook starts none. It returns the interrupt record to keep on
// the node, nil when none is under way.
func (n *nodePass) followInterrupt(ctx context.Context, due []string) (*interrupt.Record, error) {
	rec := interrupt.Read(n.work.node, n.ref)
	switch {
	case len(due) == 0 && n.holdsDrain(rec):
		return rec, nil // drained before apply: cordoned until the interrupt
	case len(due) == 0:
		return nil, nil
	case othersRunning(n.state, due) || (!n.start && rec == nil):
		return rec, nil
	}
	done, next, err := n.interruptNode(ctx, due, rec)
	if err != nil {
		return nil, err
	}
	if done { // the post-interrupt stages start in this same turn
		if _, err := n.advancePackages(ctx); err != nil {
			return nil, err
		}
	}
	return next, nil
}

// advancePackages advances every package of the node whose dependencies
// are done, in dependency order, and returns the packages whose next stage
// is the interrupt.
func (n *nodePass) advancePackages(ctx context.Context) ([]string, error) {
	done := map[string]bool{}
	var due []string
	for _, name := range dependencyOrder(n.sk, n.state) {
		if !dependenciesDone(n.sk, name, done) {
			continue
		}
		finished, err := n.advancePackage(ctx, name)
		if err != nil {
			return nil, err
		}
		done[name] = finished
		if !finished && interruptDue(n.sk, n.state, n.config, name) {
			due = append(due, name)
		}
		if !finished && n.sk.Spec.Serial {
			break // spec.serial: one package at a time on the node
		}
	}
	return due, nil
}

// advancePackage runs the package's lifecycle on the node as far as it goes
// now: records finished stages and starts the next one. It reports whether
// the package is done.
func (n *nodePass) advancePackage(ctx context.Context, name string) (bool, error) {
	for range 8 { // a package has at most 5 stages; each turn settles one
		step := nextStep(n.sk, name, n.state, n.config)
		key := skyhookv1.NodeStateKey(name, step.Version)
		switch step.Action {
		case lifecycle.Done:
			// A rerun's interrupt is over: its marker goes. A rerun that
			// asked for none keeps its marker: its record ends at config,
			// which without it reads, for a package with an interrupt of
			// its own, as an install's config with that interrupt to come.
			if n.config[rerunKey(name)] != "" {
				delete(n.config, rerunKey(name))
			}
			return true, nil
		case lifecycle.Forget:
			delete(n.state, key)
			if declared(n.sk, name) == nil {
				delete(n.config, name)
				delete(n.config, rerunKey(name))
			}
			continue
		}
		if lifecycle.IsInterrupt(step.Stage) {
			return false, nil // the node's interrupt path runs it, merged (interruptNode)
		}
		pod := stagePodFor(n.sk, name, n.work.pods[name], step)
		if marker, decided := configInterruptOf(pod); decided {
			n.config[rerunKey(name)] = marker // a record without it is older than the pod
		}
		if pod == nil && (leavingUnrecorded(n.work, name) || olderConfigRunning(n.work.pods[name], step)) {
			return false, nil // a replaced stage pod is still going: its end brings the next pass
		}
		if pod == nil && n.start && drainsFirst(declared(n.sk, name), step) {
			if ready, err := n.drainFirst(ctx, name, step); err != nil || !ready {
				return false, err
			}
		}
		entry := n.beginStep(name, step, pod)
		if pod == nil {
			return false, n.startStage(ctx, name, step, entry)
		}
		outcome := n.outcome(name, pod, step.Stage)
		switch outcome.Result {
		case stagepod.Running:
			entry.State = skyhookv1.StateInProgress
			n.state[key] = entry
			if n.paused {
				return false, n.stopForPause(ctx, pod)
			}
			return false, nil
		case stagepod.Succeeded:
			// The pod stays until the cache shows the stage recorded
			// (cleanUp), so a pass that reads an older record cannot run
			// the stage again.
			entry.State = skyhookv1.StateComplete
			n.state[key] = entry
			switch step.Stage {
			case skyhookv1.StageConfig:
				n.config[name] = pod.Annotations[stagepod.ConfigHashAnnotation]
			case skyhookv1.StageApply, skyhookv1.StageUpgrade:
				// The configMap the install ran with, until its config
				// stage runs: a change meanwhile is one to interrupt for.
				n.config[name] = pod.Annotations[stagepod.ConfigHashAnnotation]
			}
			continue
		case stagepod.Disrupted, stagepod.Refused:
			// Not the package's failure (NodeWright v0.20's accounting):
			// the entry stays in progress and the stage runs again.
			entry.State = skyhookv1.StateInProgress
			n.state[key] = entry
			return false, n.notRun(ctx, failedTry{pod: pod, name: name, step: step, message: fmt.Sprintf("package %s %s, stage %s: %s",
				name, step.Version, step.Stage, outcome.Message)}, outcome.Result, n.start)
		}
		entry.State = skyhookv1.StateErroring
		n.state[key] = entry
		return false, n.failed(ctx, failedTry{pod: pod, name: name, step: step, message: fmt.Sprintf("package %s %s, stage %s: %s (logs: %s)",
			name, step.Version, step.Stage, outcome.Message, logsHint(pod, outcome.Container))}, n.start)
	}
	return false, nil
}

// stopForPause stops a running stage of a paused rollout, as NodeWright
// v0.20 suspends its Jobs: the pod goes (with the package's grace period),
// the entry stays in progress with no try spent, and resuming runs the
// stage again from its start. Interrupts are not stopped (a reboot may be
// under way); they are followed through.
func (n *nodePass) stopForPause(ctx context.Context, pod *corev1.Pod) error {
	if !pod.DeletionTimestamp.IsZero() {
		return nil
	}
	return n.r.deletePod(ctx, n.sk, pod)
}

// beginStep is the package's entry as the step begins: named for the
// step's version, image and stage. A config rerun for a changed configMap
// decides its interrupt now, while the last hash is known; an install or
// upgrade runs the package's own interrupt; an upgrade replaces the old
// version's record.
func (n *nodePass) beginStep(name string, step lifecycle.Step, pod *corev1.Pod) skyhookv1.PackageStatus {
	key := skyhookv1.NodeStateKey(name, step.Version)
	entry := n.state[key]
	if step.Stage == skyhookv1.StageConfig && pod == nil && n.start {
		n.markConfigInterrupt(name, entry)
	}
	if pod != nil && entry.Stage != step.Stage {
		// A stage the record is behind on (a later stage of a run, or a
		// record older than the pod): its tries are the pod's.
		entry.Restarts = int32(stageAttempt(pod, step.Stage))
	}
	entry.Name, entry.Version, entry.Image, entry.Stage = name, step.Version, step.Image, step.Stage
	if d := declared(n.sk, name); d != nil && d.Version == step.Version {
		entry.ContainerSHA = d.ContainerSHA // the digest the stage pulls, as NodeWright records it
	}
	installBegins(n.state, n.config, name, step)
	return entry
}

// markConfigInterrupt decides, as a config stage starts, the interrupt
// that follows it when the configMap changed (the rerun marker, see
// rerunKey): for a rerun of a completed config, what the changed keys'
// configInterrupts ask for; for an install whose configMap changed while
// it ran, its apply or an earlier config try with the older configMap, the
// package's interrupt merged with those, as NodeWright runs them once the
// install is done.
func (n *nodePass) markConfigInterrupt(name string, entry skyhookv1.PackageStatus) {
	current := stagepod.ConfigHash(n.sk.Spec.Packages[name].ConfigMap)
	_, rerunning := n.config[rerunKey(name)]
	switch {
	case entry.State == skyhookv1.StateComplete && lifecycle.Order(entry.Stage) >= lifecycle.Order(skyhookv1.StageConfig): // a rerun
		n.config[rerunKey(name)] = configInterruptMarker(n.sk, name, n.config[name], current)
	case n.config[name] == "" || n.config[name] == current:
	case entry.State == skyhookv1.StateComplete || !rerunning:
		// The configMap changed while the install ran (apply, or a
		// config try that ran with the older configMap).
		n.config[rerunKey(name)] = installInterruptMarker(n.sk, name, n.config[name], current)
	default:
		// A rerun's config try ran with a configMap that changed again:
		// the keys changed since the last completed config.
		n.config[rerunKey(name)] = configInterruptMarker(n.sk, name, n.config[name], current)
	}
}

// startStage records the step in progress and creates its stage pod; a
// paused Skyhook starts nothing.
func (n *nodePass) startStage(ctx context.Context, name string, step lifecycle.Step, entry skyhookv1.PackageStatus) error {
	if !n.start {
		return nil
	}
	if entry.State != skyhookv1.StateInProgress && entry.State != skyhookv1.StateErroring {
		entry.Restarts = 0
	}
	if step.Stage == skyhookv1.StageConfig && entry.State == skyhookv1.StateComplete {
		// A rerun for a changed configMap: the pod of the earlier run
		// was cleaned up; this one is a new attempt.
		entry.Restarts = 0
	}
	entry.State = skyhookv1.StateInProgress
	n.state[skyhookv1.NodeStateKey(name, step.Version)] = entry
	return n.createStagePod(ctx, name, step, entry.Restarts)
}
