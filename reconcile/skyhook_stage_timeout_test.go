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
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// A stage that runs past the stage timeout does not hold its node forever:
// its pod carries the deadline for the kubelet, and when the pod still runs
// past it (KWOK's kubelet does not enforce deadlines) the stage is erroring
// with the timeout named, and retried after the backoff.
func TestStageOverItsTimeoutIsStoppedAndRetried(t *testing.T) {
	createNodes(t, cluster.NumberedNodes("stagetimeout", 1, map[string]string{"pool": "stagetimeout"})...)
	c := k8sClient(t)
	ctx := context.Background()
	created := countStagePods(t, "stagetimeout")
	hung := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	hung.Env = []corev1.EnvVar{{Name: cluster.SimDurationEnv, Value: "1h"}} // the agent never finishes
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
	if d := pods.Items[0].Spec.ActiveDeadlineSeconds; d == nil || *d != int64(stageTimeout/time.Second) {
		t.Errorf("activeDeadlineSeconds = %v, want %d", d, int64(stageTimeout/time.Second))
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
