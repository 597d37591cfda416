package stagepod

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// runSpec is spec() as a run: apply, then config.
func runSpec() Spec {
	s := spec()
	s.Then = []skyhookv1.Stage{skyhookv1.StageConfig}
	s.Timeout = 90 * time.Second
	return s
}

func TestRunPodHoldsEachStagesContainersInOrder(t *testing.T) {
	for shape, want := range map[Shape][]string{
		Compact:    {"tuning-init", "tuning-apply", "tuning-config"},
		NodeWright: {"tuning-init", "tuning-apply", "tuning-applycheck", "tuning-config", "tuning-configcheck"},
	} {
		s := runSpec()
		s.Shape = shape
		pod := Build(s)
		names := containerNamesOf(pod)
		if !slices.Equal(names, want) {
			t.Fatalf("%s: init containers %v, want %v", shape, names, want)
		}
		for _, c := range pod.Spec.InitContainers[1:] {
			var stage string
			for _, e := range c.Env {
				if e.Name == "SKYHOOK_STAGE" {
					stage = e.Value
				}
			}
			if wantStage := map[string]string{"tuning-apply": "apply", "tuning-applycheck": "apply", "tuning-config": "config", "tuning-configcheck": "config"}[c.Name]; stage != wantStage {
				t.Errorf("%s: %s: SKYHOOK_STAGE %q, want %q", shape, c.Name, stage, wantStage)
			}
		}
	}
	pod := Build(runSpec())
	if got := Stages(pod); !slices.Equal(got, []skyhookv1.Stage{skyhookv1.StageApply, skyhookv1.StageConfig}) {
		t.Errorf("Stages %v", got)
	}
	if pod.Labels[StageLabel] != "apply" || pod.Annotations[StagesAnnotation] != "apply,config" {
		t.Errorf("stage label %q, stages annotation %q; want apply (NodeWright's, the first) and apply,config", pod.Labels[StageLabel], pod.Annotations[StagesAnnotation])
	}
	if d := pod.Spec.ActiveDeadlineSeconds; d == nil || *d != 180 {
		t.Errorf("deadline %v, want 180 s: each stage's 90 s", d)
	}
	if one := Build(spec()); len(Stages(one)) != 1 || one.Annotations[StagesAnnotation] != "" {
		t.Errorf("a pod of one stage: Stages %v, annotation %q", Stages(one), one.Annotations[StagesAnnotation])
	}
}

func TestReadStageOfARun(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	exited := func(name string, code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: at, FinishedAt: at}}}
	}
	running := func(name string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}}
	}
	waiting := func(name string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}
	}
	type readCase struct {
		name          string
		phase         corev1.PodPhase
		statuses      []corev1.ContainerStatus
		apply, config Result
	}
	nodeWright := []readCase{
		{"apply running", corev1.PodPending,
			[]corev1.ContainerStatus{exited("tuning-init", 0), running("tuning-apply"), waiting("tuning-applycheck"), waiting("tuning-config"), waiting("tuning-configcheck")},
			Running, Running},
		{"apply done, config running", corev1.PodPending,
			[]corev1.ContainerStatus{exited("tuning-init", 0), exited("tuning-apply", 0), exited("tuning-applycheck", 0), running("tuning-config"), waiting("tuning-configcheck")},
			Succeeded, Running},
		{"config failed", corev1.PodFailed,
			[]corev1.ContainerStatus{exited("tuning-init", 0), exited("tuning-apply", 0), exited("tuning-applycheck", 0), exited("tuning-config", 3), waiting("tuning-configcheck")},
			Succeeded, Failed},
		{"apply's check failed", corev1.PodFailed,
			[]corev1.ContainerStatus{exited("tuning-init", 0), exited("tuning-apply", 0), exited("tuning-applycheck", 1), waiting("tuning-config"), waiting("tuning-configcheck")},
			Failed, Failed},
		{"all done", corev1.PodRunning,
			[]corev1.ContainerStatus{exited("tuning-init", 0), exited("tuning-apply", 0), exited("tuning-applycheck", 0), exited("tuning-config", 0), exited("tuning-configcheck", 0)},
			Succeeded, Succeeded},
	}
	// In the compact shape a stage's check runs in the stage's container:
	// a failed check fails it.
	compact := []readCase{
		{"apply running", corev1.PodPending,
			[]corev1.ContainerStatus{exited("tuning-init", 0), running("tuning-apply"), waiting("tuning-config")},
			Running, Running},
		{"apply done, config running", corev1.PodPending,
			[]corev1.ContainerStatus{exited("tuning-init", 0), exited("tuning-apply", 0), running("tuning-config")},
			Succeeded, Running},
		{"config or its check failed", corev1.PodFailed,
			[]corev1.ContainerStatus{exited("tuning-init", 0), exited("tuning-apply", 0), exited("tuning-config", 3)},
			Succeeded, Failed},
		{"apply or its check failed", corev1.PodFailed,
			[]corev1.ContainerStatus{exited("tuning-init", 0), exited("tuning-apply", 1), waiting("tuning-config")},
			Failed, Failed},
		{"all done", corev1.PodRunning,
			[]corev1.ContainerStatus{exited("tuning-init", 0), exited("tuning-apply", 0), exited("tuning-config", 0)},
			Succeeded, Succeeded},
	}
	for shape, cases := range map[Shape][]readCase{NodeWright: nodeWright, Compact: compact} {
		for _, tc := range cases {
			t.Run(string(shape)+"/"+tc.name, func(t *testing.T) {
				s := runSpec()
				s.Shape = shape
				pod := Build(s)
				pod.Status.Phase, pod.Status.InitContainerStatuses = tc.phase, tc.statuses
				if got := ReadStage(pod, skyhookv1.StageApply).Result; got != tc.apply {
					t.Errorf("apply: %v, want %v", got, tc.apply)
				}
				if got := ReadStage(pod, skyhookv1.StageConfig).Result; got != tc.config {
					t.Errorf("config: %v, want %v", got, tc.config)
				}
			})
		}
	}
}

func TestStageStartOfARun(t *testing.T) {
	pod := Build(runSpec())
	copied := metav1.NewTime(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	configStart := metav1.NewTime(copied.Add(40 * time.Second))
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "tuning-init", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: copied, FinishedAt: copied}}},
		{Name: "tuning-apply", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: copied, FinishedAt: configStart}}},
		{Name: "tuning-applycheck", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: configStart, FinishedAt: configStart}}},
		{Name: "tuning-config", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: configStart}}},
	}
	if start, ok := StageStart(pod, skyhookv1.StageApply); !ok || !start.Equal(copied.Time) {
		t.Errorf("apply started %v (%v), want %v: with the copy", start, ok, copied)
	}
	if start, ok := StageStart(pod, skyhookv1.StageConfig); !ok || !start.Equal(configStart.Time) {
		t.Errorf("config started %v (%v), want %v", start, ok, configStart)
	}
	pod.Status.InitContainerStatuses = pod.Status.InitContainerStatuses[:2]
	if _, ok := StageStart(pod, skyhookv1.StageConfig); ok {
		t.Error("config started before its container did")
	}
	pod.CreationTimestamp = copied
	pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses[:2],
		corev1.ContainerStatus{Name: "tuning-applycheck", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: configStart, FinishedAt: configStart}}},
		corev1.ContainerStatus{Name: "tuning-config", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: configStart, FinishedAt: metav1.NewTime(configStart.Add(5 * time.Second))}}})
	if got := StageSeconds(pod, skyhookv1.StageConfig, time.Now()); got != 5 {
		t.Errorf("config took %v s, want 5", got)
	}
	if got := StageSeconds(pod, skyhookv1.StageApply, time.Now()); got != 40 {
		t.Errorf("apply took %v s, want 40", got)
	}
}

// A run's stage that overran its share of the deadline (the kubelet stops
// the pod only past the sum) ended at its own deadline: a retry backs off
// from there, not from the pod's creation.
func TestAStageOfARunEndsAtItsOwnDeadline(t *testing.T) {
	pod := Build(runSpec()) // 90 s a stage, 180 s the pod
	created := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	pod.CreationTimestamp = metav1.NewTime(created)
	copied := metav1.NewTime(created.Add(2 * time.Second))
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "tuning-init", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: copied, FinishedAt: copied}}},
		{Name: "tuning-apply", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: copied}}},
	}
	if got := StageTimeout(pod); got != 90*time.Second {
		t.Errorf("StageTimeout %v, want 90s", got)
	}
	applyDeadline := copied.Add(90 * time.Second)
	if d, ok := StageDeadline(pod, skyhookv1.StageApply); !ok || !d.Equal(applyDeadline) {
		t.Errorf("apply's deadline %v (%v), want %v: 90 s from its start", d, ok, applyDeadline)
	}
	if _, ok := StageDeadline(pod, skyhookv1.StageConfig); ok {
		t.Error("config has a deadline before it started")
	}
	if got := FinishedAt(pod, applyDeadline.Add(-time.Second)); !got.Equal(copied.Time) {
		t.Errorf("before apply's deadline FinishedAt %v, want the copy's end %v", got, copied)
	}
	if got := FinishedAt(pod, applyDeadline.Add(10*time.Second)); !got.Equal(applyDeadline) {
		t.Errorf("past apply's deadline FinishedAt %v, want the deadline %v", got, applyDeadline)
	}
	// Apply that failed ended then, whatever its deadline.
	failed := metav1.NewTime(copied.Add(time.Second))
	pod.Status.Phase = corev1.PodFailed
	pod.Status.InitContainerStatuses[1].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 9, StartedAt: copied, FinishedAt: failed}}
	if got := FinishedAt(pod, applyDeadline.Add(10*time.Second)); !got.Equal(failed.Time) {
		t.Errorf("apply failed: FinishedAt %v, want its end %v", got, failed)
	}
}
