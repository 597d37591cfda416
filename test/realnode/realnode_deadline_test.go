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

// TestStageOverItsTimeoutIsStoppedOnTheRealNode: a step that outlasts the
// stage timeout is stopped, and the package is erroring. Its pod is a stage
// run (apply, then config) whose activeDeadlineSeconds is the two stages'
// timeouts: the operator counts apply failed once past its own share and
// the pod goes, before the kubelet's deadline would stop it.
func TestStageOverItsTimeoutIsStoppedOnTheRealNode(t *testing.T) {
	needRealNode(t)
	const name = "too-slow"
	image := pushPackage(t, "sleeper", "1.0.0", map[string][]nodeimages.ShellStep{
		"apply":       {nodeimages.Step("sleep", `echo sleeping; sleep 600`)},
		"apply-check": {nodeimages.Step("never", `true`)},
	})
	outDir(t, name)
	create(t, onRealNode(name, map[string]skyhookv1.Package{
		"sleeper": {PackageRef: skyhookv1.PackageRef{Name: "sleeper", Version: "1.0.0"}, Image: image},
	}))
	stopped := waitStopped(t, stagepod.SkyhookLabel+"="+name, stageTimeout+2*time.Minute)
	if d, want := stopped.Spec.ActiveDeadlineSeconds, 2*int64(stageTimeout/time.Second); d == nil || *d != want {
		t.Errorf("activeDeadlineSeconds = %v, want %d: the stage timeout for each of apply and config", d, want)
	}
	waitPackage(t, name, "sleeper", "1.0.0", skyhookv1.StageApply, skyhookv1.StateErroring, time.Minute)
}

// NodeWright v0.20's nodewright/stage-timeout on a real kubelet (KWOK runs
// no deadline clock, so test/upstreame2e cannot): a NodeWright package's
// own stageTimeout (20s, under the operator's default) bounds each
// attempt's stage (the pod, a run of apply and config, has 40 s), and the
// pod that sleeps past it is stopped; the pod is found by NodeWright's
// labels under its prefix. Upstream's Job documents (the deadline on the Job's pod template,
// none on the Job) have no counterpart: this operator makes no Job.
func TestNodeWrightStageTimeoutIsPerAttempt(t *testing.T) {
	needRealNode(t)
	const name = "stage-timeout"
	image := pushPackage(t, "laggard", "1.2.3", map[string][]nodeimages.ShellStep{
		"apply":       {nodeimages.Step("sleep", `echo sleeping; sleep 600`)},
		"apply-check": {nodeimages.Step("never", `true`)},
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
	stopped := waitStopped(t, selector, 2*time.Minute)
	if d := stopped.Spec.ActiveDeadlineSeconds; d == nil || *d != 2*20 {
		t.Errorf("activeDeadlineSeconds = %v, want the package's 20 for each of 2 stages, not the operator's %d", d, int64(stageTimeout/time.Second))
	}
}

// waitStopped waits for the first stage pod the selector finds to be
// stopped: deleted (the operator took it out when its stage ran past its
// timeout), or failed by the kubelet at its deadline. It returns the pod as
// last seen.
func waitStopped(t *testing.T, selector string, timeout time.Duration) *corev1.Pod {
	t.Helper()
	var first *corev1.Pod
	testenv.Eventually(t, "a stage pod ("+selector+") to be stopped", timeout, func() bool {
		pods, err := env.Clientset.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; first == nil || p.UID == first.UID {
				first = p
				return !p.DeletionTimestamp.IsZero() || (p.Status.Phase == corev1.PodFailed && p.Status.Reason == stagepod.DeadlineExceeded)
			}
		}
		return first != nil // it was seen and is gone
	})
	return first
}
