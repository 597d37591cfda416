package realnode

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// TestStageOverItsDeadlineIsStoppedByTheKubelet: a step that outlasts the
// stage timeout is stopped by the kubelet (the pod's
// activeDeadlineSeconds), and the package is erroring.
func TestStageOverItsDeadlineIsStoppedByTheKubelet(t *testing.T) {
	needRealNode(t)
	const name = "too-slow"
	image := pushPackage(t, "sleeper", "1.0.0", map[string][]nodeimages.ShellStep{
		"apply":       {step("sleep", `echo sleeping; sleep 600`)},
		"apply-check": {step("never", `true`)},
	})
	outDir(t, name)
	create(t, onRealNode(name, map[string]skyhookv1.Package{
		"sleeper": {PackageRef: skyhookv1.PackageRef{Name: "sleeper", Version: "1.0.0"}, Image: image},
	}))
	var stopped *corev1.Pod
	testenv.Eventually(t, "the kubelet to stop the stage pod at its deadline", stageTimeout+2*time.Minute, func() bool {
		pods, err := env.Clientset.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: stagepod.SkyhookLabel + "=" + name})
		if err != nil {
			return false
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.Status.Phase == corev1.PodFailed && p.Status.Reason == "DeadlineExceeded" {
				stopped = p
				return true
			}
		}
		return false
	})
	if d := stopped.Spec.ActiveDeadlineSeconds; d == nil || *d != int64(stageTimeout/time.Second) {
		t.Errorf("activeDeadlineSeconds = %v, want %d", d, int64(stageTimeout/time.Second))
	}
	waitPackage(t, name, "sleeper", "1.0.0", skyhookv1.StageApply, skyhookv1.StateErroring, time.Minute)
}
