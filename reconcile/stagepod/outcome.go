package stagepod

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Result is how a stage pod stands.
type Result int

const (
	// Running: not finished yet.
	Running Result = iota
	// Succeeded: the stage and its check exited 0.
	Succeeded
	// Failed: a container exited with a code the agent reports as failure.
	Failed
	// ImagePullFailed: an image could not be pulled.
	ImagePullFailed
	// Disrupted: the pod was taken away for a cause outside it (an
	// eviction, a preemption, a taint: the condition DisruptionTarget).
	// NodeWright v0.20's Jobs ignore such a failure: the stage runs again
	// and spends no try.
	Disrupted
	// Refused: the kubelet did not admit the pod (it failed with no
	// container ever started: OutOfcpu, OutOfmemory, NodeAffinity…), so
	// not a line of the package ran. NodeWright v0.20 spends a try on it
	// but never calls it a package failure: the node, not the package,
	// needs attention.
	Refused
)

// Outcome is a stage pod's result, with what to tell an admin.
type Outcome struct {
	Result Result
	// Container that failed, and its exit code.
	Container string
	ExitCode  int32
	// Message for conditions and events.
	Message string
}

var imagePullReasons = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true}

// Read tells how the stage pod stands: a failed container (in its state or,
// when the kubelet restarted it, its last state) or an image that cannot be
// pulled wins over anything still running; success needs every init
// container to have exited 0.
func Read(pod *corev1.Pod) Outcome {
	// A pod still running with the condition is about to be deleted by
	// whoever disrupts it (the eviction API writes the condition, then
	// deletes): it is not ended until it fails or goes.
	if c := disruption(pod); c != nil && pod.Status.Phase == corev1.PodFailed {
		return Outcome{Result: Disrupted, Message: fmt.Sprintf("the pod was disrupted (%s): %s", c.Reason, c.Message)}
	}
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, s := range statuses {
		if w := s.State.Waiting; w != nil && imagePullReasons[w.Reason] {
			return Outcome{Result: ImagePullFailed, Container: s.Name, Message: fmt.Sprintf("container %s cannot pull %s: %s", s.Name, s.Image, w.Message)}
		}
		for _, t := range []*corev1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
			if t != nil && t.ExitCode != 0 {
				message := fmt.Sprintf("container %s exited with code %d (%s)", s.Name, t.ExitCode, t.Reason)
				if t.Message != "" {
					message += ": " + t.Message
				}
				return Outcome{Result: Failed, Container: s.Name, ExitCode: t.ExitCode, Message: message}
			}
		}
	}
	if pod.Status.Phase == corev1.PodFailed && pod.Status.Reason == DeadlineExceeded {
		return Outcome{Result: Failed, Message: fmt.Sprintf("did not finish within the stage timeout (%ds): %s", ptr.Deref(pod.Spec.ActiveDeadlineSeconds, 0), pod.Status.Message)}
	}
	if pod.Status.Phase == corev1.PodFailed && !started(statuses) {
		return Outcome{Result: Refused, Message: fmt.Sprintf("the kubelet refused the pod: %s %s", pod.Status.Reason, pod.Status.Message)}
	}
	if pod.Status.Phase == corev1.PodFailed {
		return Outcome{Result: Failed, Message: fmt.Sprintf("pod failed: %s %s", pod.Status.Reason, pod.Status.Message)}
	}
	if initContainersDone(pod) {
		return Outcome{Result: Succeeded}
	}
	return Outcome{Result: Running}
}

// initContainersDone reports whether every init container of the pod
// exited 0.
func initContainersDone(pod *corev1.Pod) bool {
	done := 0
	for _, s := range pod.Status.InitContainerStatuses {
		if t := s.State.Terminated; t != nil && t.ExitCode == 0 {
			done++
		}
	}
	return len(pod.Spec.InitContainers) > 0 && done == len(pod.Spec.InitContainers)
}

// disruption is the pod's DisruptionTarget condition when it is true.
func disruption(pod *corev1.Pod) *corev1.PodCondition {
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// nodeShutdownReason is the pod reason a kubelet's graceful node shutdown
// writes (with the condition DisruptionTarget, TerminationByKubelet) on
// the pods it stops because the node goes down.
const nodeShutdownReason = "Terminated"

// EndedByNodeShutdown reports whether the pod was stopped by its kubelet
// because the node was shutting down (or rebooting).
func EndedByNodeShutdown(pod *corev1.Pod) bool {
	c := disruption(pod)
	return c != nil && c.Reason == corev1.PodReasonTerminationByKubelet && pod.Status.Reason == nodeShutdownReason
}

// started reports whether any container ever ran: the kubelet admitted
// the pod.
func started(statuses []corev1.ContainerStatus) bool {
	for _, s := range statuses {
		if s.State.Running != nil || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil {
			return true
		}
	}
	return false
}

// DeadlineExceeded is the reason of a pod the kubelet stopped at its
// activeDeadlineSeconds.
const DeadlineExceeded = "DeadlineExceeded"

// FinishedAt is when the pod's last container ended (its creation when
// none says); a pod past its deadline at now that no container says ended
// failed at the deadline, and so did a stage of a run still running past
// its own (StageDeadline), so a retry backs off from there.
func FinishedAt(pod *corev1.Pod, now time.Time) time.Time {
	t := pod.CreationTimestamp.Time
	if deadline, ok := Deadline(pod); ok && deadline.Before(now) {
		t = deadline
	}
	if stages := Stages(pod); len(stages) > 1 {
		for _, stage := range stages {
			if d, ok := StageDeadline(pod, stage); ok && d.Before(now) && d.After(t) && ReadStage(pod, stage).Result == Running {
				t = d
			}
		}
	}
	for _, s := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		for _, term := range []*corev1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
			if term != nil && term.FinishedAt.After(t) {
				t = term.FinishedAt.Time
			}
		}
	}
	return t
}

// Deadline is when the pod's activeDeadlineSeconds runs out, counted from
// its start (its creation until the kubelet reports one).
func Deadline(pod *corev1.Pod) (time.Time, bool) {
	if pod.Spec.ActiveDeadlineSeconds == nil {
		return time.Time{}, false
	}
	return Started(pod).Add(time.Duration(*pod.Spec.ActiveDeadlineSeconds) * time.Second), true
}

// Started is when the pod started: its kubelet's start time, else its
// creation.
func Started(pod *corev1.Pod) time.Time {
	if pod.Status.StartTime != nil {
		return pod.Status.StartTime.Time
	}
	return pod.CreationTimestamp.Time
}

// ReadStage tells how one stage of the pod stands: for a pod that runs one
// stage, Read; for a run of stages, Succeeded once that stage's containers
// (with the package copy, for the first) exited 0, else what the pod says
// (a later stage still waiting reads Running).
func ReadStage(pod *corev1.Pod, stage skyhookv1.Stage) Outcome {
	whole := Read(pod)
	stages := Stages(pod)
	if len(stages) == 1 {
		return whole
	}
	if stageDone(pod, stage, stages) {
		return Outcome{Result: Succeeded}
	}
	return whole
}

// stageDone reports whether the stage's containers of a run all exited 0.
func stageDone(pod *corev1.Pod, stage skyhookv1.Stage, stages []skyhookv1.Stage) bool {
	names := StageContainers(pod, stage)
	if stage == stages[0] {
		names = append(names, containersNamed(pod, CopyContainer(PackageOf(pod)))...)
	}
	want := map[string]bool{}
	for _, name := range names {
		want[name] = true
	}
	for _, s := range pod.Status.InitContainerStatuses {
		if t := s.State.Terminated; want[s.Name] && t != nil && t.ExitCode == 0 {
			delete(want, s.Name)
		}
	}
	return len(want) == 0
}

// StageContainers are the names of the pod's containers that run the
// stage: its own container, and its check's in the NodeWright shape. Read
// from the pod, so a pod of either shape (or of a release before shapes)
// reads.
func StageContainers(pod *corev1.Pod, stage skyhookv1.Stage) []string {
	pkg := PackageOf(pod)
	return containersNamed(pod, StageContainer(pkg, stage), CheckContainer(pkg, stage))
}

// containersNamed are those of the names that are the pod's init
// containers, in the pod's order.
func containersNamed(pod *corev1.Pod, names ...string) []string {
	var out []string
	for _, c := range pod.Spec.InitContainers {
		if slices.Contains(names, c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// StageStart is when the stage of a run started (its first container,
// the package copy for the first stage where the pod has one), and whether
// it has.
func StageStart(pod *corev1.Pod, stage skyhookv1.Stage) (time.Time, bool) {
	stages := Stages(pod)
	first := StageContainer(PackageOf(pod), stage)
	if copier := containersNamed(pod, CopyContainer(PackageOf(pod))); stage == stages[0] && len(copier) > 0 {
		first = copier[0]
	}
	for _, s := range pod.Status.InitContainerStatuses {
		if s.Name != first {
			continue
		}
		switch {
		case s.State.Running != nil:
			return s.State.Running.StartedAt.Time, true
		case s.State.Terminated != nil:
			return s.State.Terminated.StartedAt.Time, true
		}
	}
	return time.Time{}, false
}

// StageDeadline is when the stage has had its share of the pod's deadline
// (activeDeadlineSeconds over the stages): the pod's deadline for a pod of
// one stage; for a stage of a run, its share counted from its start, a
// first stage not started yet from the pod's start. False: no deadline,
// or a later stage not started.
func StageDeadline(pod *corev1.Pod, stage skyhookv1.Stage) (time.Time, bool) {
	stages := Stages(pod)
	if pod.Spec.ActiveDeadlineSeconds == nil || len(stages) == 1 {
		return Deadline(pod)
	}
	start, started := StageStart(pod, stage)
	if !started && stage != stages[0] {
		return time.Time{}, false
	}
	if !started {
		start = Started(pod)
	}
	return start.Add(StageTimeout(pod)), true
}

// StageTimeout is each stage's share of the pod's deadline (0: none).
func StageTimeout(pod *corev1.Pod) time.Duration {
	if pod.Spec.ActiveDeadlineSeconds == nil {
		return 0
	}
	return time.Duration(*pod.Spec.ActiveDeadlineSeconds/int64(len(Stages(pod)))) * time.Second
}

// StageSeconds is how long the stage of the pod took: from the pod's
// creation to its end for a pod of one stage; for a stage of a run, from
// its start (the pod's creation for the first) to its last container's end.
func StageSeconds(pod *corev1.Pod, stage skyhookv1.Stage, now time.Time) float64 {
	stages := Stages(pod)
	if len(stages) == 1 {
		return max(FinishedAt(pod, now).Sub(pod.CreationTimestamp.Time).Seconds(), 0)
	}
	start := pod.CreationTimestamp.Time
	if t, ok := StageStart(pod, stage); ok && stage != stages[0] {
		start = t
	}
	end := start
	names := StageContainers(pod, stage)
	for _, s := range pod.Status.InitContainerStatuses {
		if !slices.Contains(names, s.Name) {
			continue
		}
		if t := s.State.Terminated; t != nil && t.FinishedAt.After(end) {
			end = t.FinishedAt.Time
		}
	}
	return end.Sub(start).Seconds()
}
