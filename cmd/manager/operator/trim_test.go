package operator

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// A cached stage pod keeps what the engine reads of it (its outcome, its
// stages and their deadlines, its packages' views) and sheds the rest:
// the downward API snapshots, the containers' env, arguments and mounts,
// the volumes.
func TestTrimStagePodKeepsWhatTheEngineReads(t *testing.T) {
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", UID: "u1", Generation: 3},
		Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{"tuning": {
			PackageRef: skyhookv1.PackageRef{Name: "tuning", Version: "1.1.0"},
			Image:      "ghcr.io/x/tuning",
			Env:        []corev1.EnvVar{{Name: "CSP", Value: "azure"}},
		}}},
	}
	pod := stagepod.Build(stagepod.Spec{Skyhook: sk, Package: "tuning", Definition: sk.Spec.Packages["tuning"], Version: "1.1.0",
		Image: "ghcr.io/x/tuning", Stage: skyhookv1.StageApply, Then: []skyhookv1.Stage{skyhookv1.StageConfig}, Timeout: time.Minute,
		Node: "node-1", Namespace: "skyhook-system", AgentImage: "ghcr.io/skyhook/agent:1", ConfigMap: "demo-tuning",
		NodeLabels: map[string]string{"gpu": "h100"}})
	pod.Status.Phase = corev1.PodRunning
	for i, c := range pod.Spec.InitContainers {
		state := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}
		if i == 3 {
			state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}}
		}
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, State: state})
	}
	before, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	original := pod.DeepCopy()

	got, err := trimStagePod(pod)
	if err != nil {
		t.Fatal(err)
	}
	trimmed := got.(*corev1.Pod)
	after, _ := json.Marshal(trimmed)
	t.Logf("%d bytes -> %d", len(before), len(after))

	for _, key := range []string{stagepod.NodeLabelsAnnotation, stagepod.NodeAnnotationsAnnotation, stagepod.PackagesAnnotation} {
		if _, kept := trimmed.Annotations[key]; kept {
			t.Errorf("annotation %s kept", key)
		}
	}
	if len(trimmed.Spec.Volumes) != 0 {
		t.Errorf("volumes kept: %v", trimmed.Spec.Volumes)
	}
	for _, c := range trimmed.Spec.InitContainers {
		if c.Env != nil || c.Args != nil || c.Command != nil || c.VolumeMounts != nil || c.SecurityContext != nil {
			t.Errorf("container %s keeps more than its name and image: %+v", c.Name, c)
		}
	}
	// What the engine reads comes out the same.
	if a, b := stagepod.Read(original), stagepod.Read(trimmed); a != b {
		t.Errorf("outcome %+v trimmed, %+v before", b, a)
	}
	if a, b := stagepod.Stages(original), stagepod.Stages(trimmed); len(a) != 2 || len(b) != len(a) || a[0] != b[0] || a[1] != b[1] {
		t.Errorf("stages %v trimmed, %v before", b, a)
	}
	if a, b := stagepod.ReadStage(original, skyhookv1.StageConfig), stagepod.ReadStage(trimmed, skyhookv1.StageConfig); a != b {
		t.Errorf("config stage %+v trimmed, %+v before", b, a)
	}
	aDeadline, _ := stagepod.Deadline(original)
	bDeadline, _ := stagepod.Deadline(trimmed)
	if !aDeadline.Equal(bDeadline) || trimmed.Spec.NodeName != "node-1" ||
		!reflect.DeepEqual(trimmed.Spec.TerminationGracePeriodSeconds, original.Spec.TerminationGracePeriodSeconds) {
		t.Errorf("deadline %v, node %q, grace %v after trimming", bDeadline, trimmed.Spec.NodeName, trimmed.Spec.TerminationGracePeriodSeconds)
	}
	if len(after) > len(before)/2 {
		t.Errorf("trimmed to %d of %d bytes: most of a stage pod is what the engine does not read", len(after), len(before))
	}
}
