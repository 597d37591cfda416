package reconcile

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// Stage runs (unless SkyhookReconciler.PodPerStage): an install's config runs in
// the pod of its apply or upgrade. A run's pod is each of its stages' pod:
// a stage's outcome, try and timeout are read from its own containers
// (stagepod.ReadStage), and the pod is retired once its last stage is
// recorded.

// newerTry reports whether pod runs a later try of the stage than other.
func newerTry(pod, other *corev1.Pod, stage skyhookv1.Stage) bool {
	a, b := stageAttempt(pod, stage), stageAttempt(other, stage)
	if a != b {
		return a > b
	}
	return stagepod.Stages(pod)[0] == stage && stagepod.Stages(other)[0] != stage
}

// runAfter are the stages the pod of the step runs after it, unless
// PodPerStage: an install's config after its apply or upgrade (nothing
// interrupts between them).
func (n *nodePass) runAfter(step lifecycle.Step) []skyhookv1.Stage {
	if !n.r.PodPerStage && (step.Stage == skyhookv1.StageApply || step.Stage == skyhookv1.StageUpgrade) {
		return []skyhookv1.Stage{skyhookv1.StageConfig}
	}
	return nil
}

// attempt is the try a stage pod runs (0 for the first).
func attempt(pod *corev1.Pod) int {
	n, _ := strconv.Atoi(pod.Annotations[stagepod.AttemptAnnotation])
	return n
}

// stageAttempt is the try of the stage a pod runs: the pod's for its first
// stage; a later stage of a run is that stage's first try.
func stageAttempt(pod *corev1.Pod, stage skyhookv1.Stage) int {
	if stagepod.Stages(pod)[0] != stage {
		return 0
	}
	return attempt(pod)
}

// lastStage is the last stage a stage pod runs.
func lastStage(pod *corev1.Pod) skyhookv1.Stage {
	stages := stagepod.Stages(pod)
	return stages[len(stages)-1]
}
