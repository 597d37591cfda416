package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// A node in progress that goes NotReady holds its budget slot for the
// NotReady timeout, then is skipped (status blocked, named in NodesBlocked)
// so the next node starts; back Ready, it resumes and completes.
func TestNotReadyNodeIsSkippedAndResumes(t *testing.T) {
	createNodes(t, simnode.Numbered("notready", 3, map[string]string{"pool": "notready"})...)
	c := k8sClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	busy, err := testenv.WatchBusyNodes(ctx, env, "pool=notready", skyhookv1.Skyhooks.Named("notready"))
	if err != nil {
		t.Fatal(err)
	}
	one := 1
	p := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "2s"}}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "notready"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": "notready"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &one},
			Packages:           skyhookv1.Packages{"tuning": p},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	eventually(t, "notready-0 to start", func() bool {
		return getNode(t, "notready-0").Labels[skyhookv1.StatusKey("notready")] == "in_progress"
	})
	down := time.Now()
	if err := env.Reboot(ctx, "notready-0", "boot-back", 15*time.Second); err != nil {
		t.Fatal(err)
	}
	got := waitSkyhook(t, "notready", 30*time.Second, func(s *skyhookv1.Skyhook) bool {
		return strings.Contains(conditions.GetMessage(s, skyhookv1.NodesBlockedCondition), "notready-0 (NotReady since")
	})
	eventually(t, "notready-1 to start while notready-0 is down", func() bool {
		return getNode(t, "notready-1").Labels[skyhookv1.StatusKey("notready")] != ""
	})
	if n := getNode(t, "notready-0"); isNodeReady(n) {
		t.Fatalf("notready-0 came back after %s, before the next node started; the test proves nothing", time.Since(down))
	} else if n.Labels[skyhookv1.StatusKey("notready")] != "blocked" {
		t.Errorf("the skipped node says %q, want blocked", n.Labels[skyhookv1.StatusKey("notready")])
	}
	if got.Status.Status == skyhookv1.StatusComplete {
		t.Error("complete with a node skipped")
	}
	waitSkyhook(t, "notready", 2*time.Minute, isReady)
	if most := busy.TakeMost(); most != 1 {
		t.Errorf("at most %d nodes in progress at once, want the budget of 1", most)
	}
}
