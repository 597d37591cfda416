package realnode

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
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
	stopped := waitDeadlineExceeded(t, stagepod.SkyhookLabel+"="+name, stageTimeout+2*time.Minute)
	if d := stopped.Spec.ActiveDeadlineSeconds; d == nil || *d != int64(stageTimeout/time.Second) {
		t.Errorf("activeDeadlineSeconds = %v, want %d", d, int64(stageTimeout/time.Second))
	}
	waitPackage(t, name, "sleeper", "1.0.0", skyhookv1.StageApply, skyhookv1.StateErroring, time.Minute)
}

// NodeWright v0.20's nodewright/stage-timeout on a real kubelet (KWOK runs
// no deadline clock, so test/upstreame2e cannot): a NodeWright package's
// own stageTimeout (20s, under the operator's default) is the deadline of
// each attempt's pod, and the kubelet fails the pod that sleeps past it
// with DeadlineExceeded; the pod is found by NodeWright's labels under its
// prefix. Upstream's Job documents (the deadline on the Job's pod template,
// none on the Job) have no counterpart: this operator makes no Job.
func TestNodeWrightStageTimeoutIsPerAttempt(t *testing.T) {
	needRealNode(t)
	const name = "stage-timeout"
	image := pushPackage(t, "laggard", "1.2.3", map[string][]nodeimages.ShellStep{
		"apply":       {step("sleep", `echo sleeping; sleep 600`)},
		"apply-check": {step("never", `true`)},
	})
	outDir(t, name)
	sk := onRealNode(name, map[string]skyhookv1.Package{
		"laggard": {PackageRef: skyhookv1.PackageRef{Name: "laggard", Version: "1.2.3"}, Image: image,
			StageTimeout: &metav1.Duration{Duration: 20 * time.Second}},
	})
	nw := &nodewrightv1.NodeWright{ObjectMeta: sk.ObjectMeta, Spec: sk.Spec}
	c := kube(t)
	if err := c.Create(context.Background(), nw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: name}})
		testenv.Eventually(t, "NodeWright "+name+" to be gone", 2*time.Minute, func() bool {
			return apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKey{Name: name}, &nodewrightv1.NodeWright{}))
		})
	})
	selector := "nodewright.nvidia.com/name=stage-timeout,nodewright.nvidia.com/package=laggard-1.2.3,nodewright.nvidia.com/stage=apply"
	stopped := waitDeadlineExceeded(t, selector, 2*time.Minute)
	if d := stopped.Spec.ActiveDeadlineSeconds; d == nil || *d != 20 {
		t.Errorf("activeDeadlineSeconds = %v, want the package's 20, not the operator's %d", d, int64(stageTimeout/time.Second))
	}
}

// waitDeadlineExceeded waits for a stage pod the selector finds to be
// failed by the kubelet at its deadline, and returns it.
func waitDeadlineExceeded(t *testing.T, selector string, timeout time.Duration) *corev1.Pod {
	t.Helper()
	var stopped *corev1.Pod
	testenv.Eventually(t, "the kubelet to fail a stage pod ("+selector+") with DeadlineExceeded", timeout, func() bool {
		pods, err := env.Clientset.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.Status.Phase == corev1.PodFailed && p.Status.Reason == stagepod.DeadlineExceeded {
				stopped = p
				return true
			}
		}
		return false
	})
	return stopped
}
