package reconcile

// Retries: what follows a try of a stage that did not succeed. A failed
// try is retried after a backoff until the retry budget is spent; a try
// that ran nothing of the package (disrupted, or refused by the kubelet)
// is not the package's failure (NodeWright v0.20's accounting).

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// failedTry is a try of a stage that failed: its pod, its package and
// step, and what to say about it.
type failedTry struct {
	pod     *corev1.Pod
	name    string
	step    lifecycle.Step
	message string
}

// failed follows a failed try of a stage (its entry already recorded
// erroring): the next try (retry), reported as a failed attempt while the
// node stays in progress, or, once the stage failed for good, the node
// erroring with what failed.
func (n *nodePass) failed(ctx context.Context, try failedTry, start bool) error {
	key := skyhookv1.NodeStateKey(try.name, try.step.Version)
	attempt := triesBefore(n.state[key], try.pod, try.step.Stage) + 1
	retrying, err := n.retry(ctx, try.pod, try.name, try.step, start)
	if !retrying {
		n.progress.NodeErroring(n.work.node.Name, try.message)
		return err
	}
	if n.retrying == nil {
		n.retrying = map[string]bool{}
	}
	n.retrying[key] = true
	n.progress.NodeRetrying(n.work.node.Name, fmt.Sprintf("attempt %d of %d failed, tried again: %s", attempt, n.r.MaxAttempts, try.message))
	return err
}

// notRun follows a try of a stage that ended with nothing of the package
// to judge, as NodeWright v0.20 counts it. A disrupted try (an eviction,
// a preemption) spends nothing: its pod goes and the stage runs again as
// the same try. A try the kubelet refused to admit spends a try, so the
// backoff grows, but is never the package's failure: the node stays in
// progress, never erroring, and the stage is tried again past the retry
// budget too, at most every 5 minutes, until the node has room for it.
// Either pod ran nothing and is deleted, not kept. start=false only
// waits.
func (n *nodePass) notRun(ctx context.Context, try failedTry, result stagepod.Result, start bool) error {
	key := skyhookv1.NodeStateKey(try.name, try.step.Version)
	entry := n.state[key]
	if result == stagepod.Disrupted {
		n.progress.NodeRetrying(n.work.node.Name, try.message+"; run again, no try spent")
		if !start {
			return nil
		}
		return n.r.deletePod(ctx, n.sk, try.pod)
	}
	n.progress.NodeRetrying(n.work.node.Name, fmt.Sprintf("attempt %d: %s; not a failure of the package: the node has no room for the stage pod, tried again",
		entry.Restarts+1, try.message))
	if !start || n.backingOff(try.pod, entry.Restarts) {
		return nil
	}
	return n.tryAgain(ctx, try, entry.Restarts+1, n.r.deletePod)
}

// retry starts the next try of a failed stage after its backoff, at once for
// a new generation of the Skyhook (the spec may fix it), or gives up after
// MaxAttempts, keeping the failed pod so its logs stay readable. The
// package's entry is already recorded erroring; start=false only waits. It
// reports whether the stage is tried again.
func (n *nodePass) retry(ctx context.Context, pod *corev1.Pod, name string, step lifecycle.Step, start bool) (bool, error) {
	newGeneration := pod.Annotations[stagepod.GenerationAnnotation] != strconv.FormatInt(n.sk.Generation, 10)
	if !start {
		return false, nil
	}
	tries := triesBefore(n.state[skyhookv1.NodeStateKey(name, step.Version)], pod, step.Stage)
	if !newGeneration {
		if tries+1 >= n.r.MaxAttempts {
			n.progress.GaveUp(fmt.Sprintf("%s on %s", name, n.work.node.Name))
			return false, nil
		}
		if n.backingOff(pod, tries) {
			return true, nil
		}
	}
	restarts := tries + 1
	if newGeneration {
		restarts = 0
	}
	return true, n.tryAgain(ctx, failedTry{pod: pod, name: name, step: step}, restarts, n.r.retire)
}

// triesBefore is how many tries of the stage came before the one the
// failed pod ran: the record's count, or the pod's own attempt number when
// the record is behind it. A record write lost after the next try's pod was
// created (a conflict, an operator that died between the two) must not
// run that try a second time.
func triesBefore(entry skyhookv1.PackageStatus, pod *corev1.Pod, stage skyhookv1.Stage) int32 {
	return max(entry.Restarts, int32(stageAttempt(pod, stage)))
}

// backingOff reports whether the backoff after the try the pod ran (the
// entry's restarts) still runs, and comes back when it ends.
func (n *nodePass) backingOff(pod *corev1.Pod, restarts int32) bool {
	wait := backoff(restarts) - time.Since(stagepod.FinishedAt(pod, time.Now()))
	if wait > 0 {
		n.progress.RequeueIn(wait)
	}
	return wait > 0
}

// tryAgain takes the try's pod out of the rollout (deleted, or retired
// for its logs) and starts the stage's next try, numbered restarts.
func (n *nodePass) tryAgain(ctx context.Context, try failedTry, restarts int32, takeOut func(context.Context, *skyhookv1.Skyhook, *corev1.Pod) error) error {
	if err := takeOut(ctx, n.sk, try.pod); err != nil {
		return err
	}
	key := skyhookv1.NodeStateKey(try.name, try.step.Version)
	entry := n.state[key]
	entry.Restarts = restarts
	n.state[key] = entry
	return n.createStagePod(ctx, try.name, try.step, restarts)
}

// backoff is the wait before the next try of a failed stage: 5 s, doubling,
// at most 5 minutes.
func backoff(attempt int32) time.Duration {
	d := 5 * time.Second << min(attempt, 6)
	return min(d, 5*time.Minute)
}
