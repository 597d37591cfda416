package upstreamjob

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// job is a stage Job as NodeWright v0.20 makes it: its labels, its package
// annotation, its pod pinned to the node.
func job(stage string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-tuning-1-0-0-" + stage + "-node-1-1a2b3c4d", Namespace: "nodewright", UID: "j1",
			Labels: map[string]string{"nodewright.nvidia.com/name": "gpu", "nodewright.nvidia.com/package": "tuning-1.0.0",
				"nodewright.nvidia.com/stage": stage, "nodewright.nvidia.com/node": "node-1", "nodewright.nvidia.com/generation": "2"},
			Annotations: map[string]string{"nodewright.nvidia.com/package": `{"name":"tuning","version":"1.0.0","skyhook":"gpu","stage":"` + stage + `","image":"ghcr.io/x/tuning"}`},
		},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeName: "node-1", ActiveDeadlineSeconds: ptr.To[int64](3600)}}},
	}
}

func TestStandInCarriesTheStep(t *testing.T) {
	pod, ok := StandIn(job("apply"), skyhookv1.NodeWrights, "k=1")
	if !ok {
		t.Fatal("not read")
	}
	if pod.Name != "job/gpu-tuning-1-0-0-apply-node-1-1a2b3c4d" || pod.Spec.NodeName != "node-1" || stagepod.PackageOf(pod) != "tuning" ||
		pod.Labels[stagepod.StageLabel] != "apply" || pod.Labels["nodewright.nvidia.com/nodewright"] != "gpu" ||
		pod.Annotations[stagepod.VersionAnnotation] != "1.0.0" || pod.Annotations[stagepod.GenerationAnnotation] != "2" ||
		pod.Annotations[stagepod.ConfigHashAnnotation] != "k=1" {
		t.Errorf("stand-in %+v", pod.ObjectMeta)
	}
	if name, standIn := JobOf(pod); !standIn || name != "gpu-tuning-1-0-0-apply-node-1-1a2b3c4d" {
		t.Errorf("JobOf: %q %v", name, standIn)
	}
	if _, standIn := JobOf(&corev1.Pod{}); standIn {
		t.Error("a pod of this operator read as a stand-in")
	}
}

func TestStandInEndsAsItsJob(t *testing.T) {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	running := job("apply")
	complete := job("apply")
	complete.Status = batchv1.JobStatus{Succeeded: 1, CompletionTime: &now,
		Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}}
	failed := job("apply")
	failed.Status = batchv1.JobStatus{Failed: 4,
		Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now}}}
	suspended := job("apply")
	suspended.Spec.Suspend = ptr.To(true)
	for name, c := range map[string]struct {
		job  *batchv1.Job
		want stagepod.Result
	}{"running": {running, stagepod.Running}, "complete": {complete, stagepod.Succeeded}, "failed": {failed, stagepod.Failed}, "suspended": {suspended, stagepod.Failed}} {
		pod, _ := StandIn(c.job, skyhookv1.NodeWrights, "")
		if got := stagepod.Read(pod); got.Result != c.want {
			t.Errorf("%s: %+v, want %v", name, got, c.want)
		}
	}
	for name, j := range map[string]*batchv1.Job{"failed": failed, "suspended": suspended} {
		pod, _ := StandIn(j, skyhookv1.NodeWrights, "")
		if got := stagepod.Read(pod).Message; !strings.Contains(got, "NodeWright's Job "+j.Name) {
			t.Errorf("%s stand-in: %q does not name the Job", name, got)
		}
	}
	pod, _ := StandIn(failed, skyhookv1.NodeWrights, "")
	if !stagepod.FinishedAt(pod, time.Now()).Equal(now.Time) || pod.Annotations[stagepod.AttemptAnnotation] != "4" {
		t.Errorf("failed stand-in: finished %s, attempt %s", stagepod.FinishedAt(pod, time.Now()), pod.Annotations[stagepod.AttemptAnnotation])
	}
}

func TestOnlyNodeWrightsStageJobsAreRead(t *testing.T) {
	unlabelled := job("apply")
	delete(unlabelled.Labels, "nodewright.nvidia.com/name")
	noPackage := job("apply")
	delete(noPackage.Annotations, "nodewright.nvidia.com/package")
	broken := job("apply")
	broken.Annotations["nodewright.nvidia.com/package"] = "{"
	unpinned := job("apply")
	unpinned.Spec.Template.Spec.NodeName = ""
	for name, j := range map[string]*batchv1.Job{"unlabelled": unlabelled, "no package": noPackage, "broken package": broken, "unpinned": unpinned} {
		if _, ok := StandIn(j, skyhookv1.NodeWrights, ""); ok {
			t.Errorf("%s: read as a stage Job", name)
		}
	}
	if _, ok := StandIn(job("apply"), skyhookv1.Skyhooks, ""); ok {
		t.Error("a NodeWright's Job read for a Skyhook")
	}
}

func TestInterruptedOnlyForAJobThatEndedWell(t *testing.T) {
	done := job("interrupt")
	now := metav1.Now()
	done.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	pod, _ := StandIn(done, skyhookv1.NodeWrights, "")
	running, _ := StandIn(job("interrupt"), skyhookv1.NodeWrights, "")
	own := &corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "interrupt"}}}, Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{{
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}}}}
	if !Interrupted(pod) || Interrupted(running) || Interrupted(own) {
		t.Errorf("Interrupted: done %v, running %v, this operator's pod %v", Interrupted(pod), Interrupted(running), Interrupted(own))
	}
}
