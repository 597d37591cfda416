package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// A stage that runs past the stage timeout does not hold its node forever:
// its pod carries the deadline for the kubelet, and when the pod still runs
// past it (KWOK's kubelet does not enforce deadlines) the stage is erroring
// with the timeout named, and retried after the backoff.
func TestStageOverItsTimeoutIsStoppedAndRetried(t *testing.T) {
	createNodes(t, simnode.Numbered("stagetimeout", 1, map[string]string{"pool": "stagetimeout"})...)
	c := k8sClient(t)
	ctx := context.Background()
	created := countStagePods(t, "stagetimeout")
	hung := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	hung.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1h"}} // the agent never finishes
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "stagetimeout"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "stagetimeout"}},
			Packages:     skyhookv1.Packages{"tuning": hung},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })

	var pods corev1.PodList
	eventually(t, "the first stage pod", func() bool {
		return c.List(ctx, &pods, client.InNamespace(operatorNamespace), client.MatchingLabels{stagepod.SkyhookLabel: "stagetimeout"}) == nil && len(pods.Items) > 0
	})
	// A run's pod (apply and config) has each stage's timeout.
	first := &pods.Items[0]
	if d, want := first.Spec.ActiveDeadlineSeconds, int64(stageTimeout/time.Second)*int64(len(stagepod.Stages(first))); d == nil || *d != want {
		t.Errorf("activeDeadlineSeconds = %v, want %d", d, want)
	}

	got := waitSkyhook(t, "stagetimeout", time.Minute, func(sk *skyhookv1.Skyhook) bool {
		return len(sk.Status.NodesNeedingAttention) == 1 && strings.Contains(sk.Status.NodesNeedingAttention[0].Message, "did not finish within the stage timeout (12s)")
	})
	if msg := got.Status.NodesNeedingAttention[0].Message; !strings.Contains(msg, "stage apply") || !strings.Contains(msg, "--all-containers") {
		t.Errorf("attention message %q lacks the stage or the logs hint", msg)
	}
	// The retry backs off from the deadline (5 s), so the erroring state is
	// there to see rather than replaced by the next try at once.
	if n := created()["stagetimeout-0/apply"]; n != 1 {
		t.Errorf("%d tries when the timeout was reported, want 1 (the retry waits its backoff)", n)
	}
	eventually(t, "a second try of the stage", func() bool { return created()["stagetimeout-0/apply"] >= 2 })

}

// A package's own stageTimeout (NodeWright v0.18) wins over the
// operator's: its pods carry that deadline, rounded up to whole seconds,
// and "0s" sets none.
func TestPackageStageTimeoutWinsOverTheOperators(t *testing.T) {
	createNodes(t, simnode.Numbered("pkgtimeout", 1, map[string]string{"pool": "pkgtimeout"})...)
	c := k8sClient(t)
	ctx := context.Background()
	short, unbounded := pkg("1.0.0", "ghcr.io/x/short", nil), pkg("1.0.0", "ghcr.io/x/unbounded", nil)
	short.StageTimeout = &metav1.Duration{Duration: 3500 * time.Millisecond}
	unbounded.StageTimeout = &metav1.Duration{}
	for _, p := range []*skyhookv1.Package{&short, &unbounded} {
		p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1h"}}
	}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "pkgtimeout"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "pkgtimeout"}},
			Packages:     skyhookv1.Packages{"short": short, "unbounded": unbounded},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	deadlines, stages := map[string]*int64{}, map[string]int64{}
	eventually(t, "both packages' stage pods", func() bool {
		var pods corev1.PodList
		if c.List(ctx, &pods, client.InNamespace(operatorNamespace), client.MatchingLabels{stagepod.SkyhookLabel: "pkgtimeout"}) != nil {
			return false
		}
		for i := range pods.Items {
			for _, view := range stagepod.Views(&pods.Items[i]) { // each package's own deadline in a pod of several
				deadlines[stagepod.PackageOf(view)] = view.Spec.ActiveDeadlineSeconds
				stages[stagepod.PackageOf(view)] = int64(len(stagepod.Stages(view)))
			}
		}
		return len(deadlines) == 2
	})
	if d := deadlines["short"]; d == nil || *d != 4*stages["short"] {
		t.Errorf("short's deadline %v, want 4 s (3.5 s rounded up) for each of its %d stages", d, stages["short"])
	}
	if d := deadlines["unbounded"]; d != nil {
		t.Errorf("unbounded's deadline %d, want none", *d)
	}
	waitSkyhook(t, "pkgtimeout", time.Minute, func(sk *skyhookv1.Skyhook) bool {
		for _, a := range sk.Status.NodesNeedingAttention {
			if strings.Contains(a.Message, "package short 1.0.0") && strings.Contains(a.Message, "did not finish within the stage timeout (4s)") {
				return true
			}
		}
		return false
	})
}
