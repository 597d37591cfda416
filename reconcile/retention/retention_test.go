package retention

import (
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// try is a stage pod of the rollout owner for tuning's apply on node-1,
// attempt n, kept as retained ("" for not kept), its apply container
// exited with code.
func try(owner types.UID, n int, retained string, code int32) *corev1.Pod {
	yes := true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p" + strconv.Itoa(n) + string(owner), UID: types.UID("u" + strconv.Itoa(n) + string(owner)),
			Labels:          map[string]string{stagepod.PackageNameLabel: "tuning", stagepod.StageLabel: "apply"},
			Annotations:     map[string]string{stagepod.VersionAnnotation: "1.0.0", stagepod.AttemptAnnotation: strconv.Itoa(n)},
			OwnerReferences: []metav1.OwnerReference{{UID: owner, Controller: &yes}}},
		Spec: corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{{Name: "apply",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}}},
	}
	if retained != "" {
		pod.Labels[RetainedLabel] = retained
	}
	return pod
}

// Of a stage's failed attempts the first and the latest stay, the latest
// being the stage's own pod when it gave up; another stage's are counted
// apart; succeeded pods are never surplus.
func TestSurplusKeepsTheFirstAndTheLatestFailure(t *testing.T) {
	pods := []*corev1.Pod{try("a", 0, Failed, 2), try("a", 1, Failed, 2), try("a", 2, Failed, 2), try("a", 3, "", 2),
		try("b", 0, Failed, 2), try("b", 1, Failed, 2), try("c", 0, Succeeded, 0), try("c", 1, Succeeded, 0), try("c", 2, Succeeded, 0)}
	got := map[string]bool{}
	for _, pod := range Surplus(pods) {
		got[pod.Name] = true
	}
	if len(got) != 2 || !got["p1a"] || !got["p2a"] {
		t.Errorf("surplus %v, want p1a and p2a", got)
	}
	// A live pod that has not failed is not the latest failure.
	if s := Surplus([]*corev1.Pod{try("a", 0, Failed, 2), try("a", 1, Failed, 2), try("a", 2, "", 0)}); len(s) != 0 {
		t.Errorf("surplus %v with two failures", s)
	}
}

// A kept pod is marked and timed; an unreadable time counts as up.
func TestPatchAndExpired(t *testing.T) {
	until := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	if got := string(Patch("pod-uid", Failed, until)); got != `{"metadata":{"annotations":{"skyhook.nvidia.com/retained-until":"2026-11-26T12:00:00Z"},"labels":{"skyhook.nvidia.com/retained":"failed"},"uid":"pod-uid"}}` {
		t.Errorf("patch %s", got)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{RetainedLabel: Failed},
		Annotations: map[string]string{UntilAnnotation: until.Format(time.RFC3339)}}}
	if !Retained(pod) || Expired(pod, until.Add(-time.Second)) || !Expired(pod, until) {
		t.Error("expiry at the time written")
	}
	pod.Annotations[UntilAnnotation] = "soon"
	if !Expired(pod, until.Add(-time.Hour)) {
		t.Error("an unreadable time is not up")
	}
}
