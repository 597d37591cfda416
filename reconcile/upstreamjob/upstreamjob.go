// Package upstreamjob reads the stage Jobs NodeWright v0.18 and later run:
// one batch/v1 Job per rollout, package, version, stage and node, in the
// operator's namespace, owned by the NodeWright. An operator taking over a
// cluster from NodeWright finds them running, finished and recorded, or
// finished and not yet recorded; it must wait for the first, read the
// second and third, and run none of their stages again.
//
// This operator runs stages as pods, so a Job is read as a stand-in stage
// pod (StandIn): in memory only, with the package, stage, version and
// outcome of the Job in the places a stage pod of this operator carries
// them. The rollout then treats it as one of its own: waits while it runs,
// records its outcome, retries a failure with a pod of its own, and
// deletes it (Delete: the Job, whose pods go with it) once its stage is
// recorded.
package upstreamjob

import (
	"encoding/json"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// NodeWright's keys on its Jobs, under the kind's prefix.
const (
	nameLabel         = "/name"
	generationLabel   = "/generation"
	packageAnnotation = "/package"
)

// standInAnnotation marks a stand-in and names its Job.
const standInAnnotation = skyhookv1.MetadataPrefix + "/upstream-job"

// NameLabel is the label NodeWright's Jobs of the kind's rollouts carry,
// whose value is the rollout's name.
func NameLabel(kind skyhookv1.RolloutKind) string { return kind.Prefix + nameLabel }

// packageOf is the package annotation of a Job: which package, version
// and stage it runs (NodeWright still names the rollout "skyhook" there).
type packageOf struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Stage   string `json:"stage"`
	Rollout string `json:"skyhook"`
}

// Step is what a Job runs.
type Step struct {
	Package, Version, Node string
	Stage                  skyhookv1.Stage
}

// StepOf reads what a Job of the kind runs; false when the Job is not one
// of NodeWright's stage Jobs.
func StepOf(job *batchv1.Job, kind skyhookv1.RolloutKind) (Step, bool) {
	if job.Labels[NameLabel(kind)] == "" {
		return Step{}, false
	}
	var p packageOf
	if err := json.Unmarshal([]byte(job.Annotations[kind.Prefix+packageAnnotation]), &p); err != nil || p.Name == "" || p.Stage == "" {
		return Step{}, false
	}
	node := job.Spec.Template.Spec.NodeName
	if node == "" {
		return Step{}, false
	}
	return Step{Package: p.Name, Version: p.Version, Stage: skyhookv1.Stage(p.Stage), Node: node}, true
}

// StandIn is the stage pod the rollout reads for a Job of the kind (see the
// package doc), named job/<name> so that the kubectl logs command the
// rollout prints for it reads the Job's logs. configHash is the hash of
// the configMap the package declares: a Job does not say which it ran
// with, and NodeWright replaces Jobs whose configMap changed.
func StandIn(job *batchv1.Job, kind skyhookv1.RolloutKind, configHash string) (*corev1.Pod, bool) {
	step, ok := StepOf(job, kind)
	if !ok {
		return nil, false
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "job/" + job.Name, Namespace: job.Namespace, UID: job.UID, CreationTimestamp: job.CreationTimestamp,
			Labels: map[string]string{kind.OwnerLabel(): job.Labels[NameLabel(kind)], stagepod.PackageNameLabel: step.Package,
				stagepod.StageLabel: string(step.Stage)},
			Annotations: map[string]string{standInAnnotation: job.Name, stagepod.VersionAnnotation: step.Version,
				stagepod.GenerationAnnotation: job.Labels[kind.Prefix+generationLabel],
				stagepod.ConfigHashAnnotation: configHash, stagepod.AttemptAnnotation: strconv.Itoa(int(job.Status.Failed))},
		},
		Spec: corev1.PodSpec{NodeName: step.Node, ActiveDeadlineSeconds: job.Spec.Template.Spec.ActiveDeadlineSeconds},
	}
	setOutcome(pod, job)
	return pod, true
}

// setOutcome gives the stand-in the status a stage pod ending as the Job
// did would have (stagepod.Read reads it back).
func setOutcome(pod *corev1.Pod, job *batchv1.Job) {
	switch {
	case condition(job, batchv1.JobComplete) != nil:
		finished := job.Status.CompletionTime
		if finished == nil {
			finished = &condition(job, batchv1.JobComplete).LastTransitionTime
		}
		pod.Spec.InitContainers = []corev1.Container{{Name: "job"}}
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, InitContainerStatuses: []corev1.ContainerStatus{{Name: "job",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: *finished}}}}}
	case condition(job, batchv1.JobFailed) != nil:
		failed := condition(job, batchv1.JobFailed)
		pod.CreationTimestamp = failed.LastTransitionTime // when it ended: a retry backs off from there
		ended(pod, failed.Reason, strings.TrimSpace("NodeWright's Job "+job.Name+" failed: "+failed.Message), failed.LastTransitionTime)
	case job.Spec.Suspend != nil && *job.Spec.Suspend:
		// NodeWright's pause suspends a Job: its pod is gone and its
		// stage runs again from the start on resume, as it does here.
		ended(pod, "Suspended", "NodeWright's Job "+job.Name+" was suspended by a pause; the stage runs again from its start", pod.CreationTimestamp)
	default:
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: job.Status.StartTime}
	}
}

// ended gives the stand-in the status of a stage pod whose step ran and
// failed (a Job's pods ran: it is no pod the kubelet refused to admit, see
// stagepod.Refused).
func ended(pod *corev1.Pod, reason, message string, at metav1.Time) {
	pod.Spec.InitContainers = []corev1.Container{{Name: "job"}}
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: reason, Message: message,
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "job", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: reason, Message: message, FinishedAt: at}}}}}
}

func condition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if c := &job.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// JobOf is the name of the Job a stand-in stands for; false for a pod of
// this operator's.
func JobOf(pod *corev1.Pod) (string, bool) {
	name, ok := pod.Annotations[standInAnnotation]
	return name, ok
}

// Interrupted reports whether a stand-in is an interrupt Job that ended
// well: NodeWright's agent ends it once the interrupt is done, after the
// reboot when it is one, so no reboot is left to verify.
func Interrupted(pod *corev1.Pod) bool {
	_, standIn := JobOf(pod)
	return standIn && stagepod.Read(pod).Result == stagepod.Succeeded
}
