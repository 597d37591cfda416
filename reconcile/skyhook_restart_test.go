package reconcile_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// The operator killed mid-rollout and started again picks up where the node
// records say: no stage that completed runs again.
func TestOperatorRestartResumesWithoutRedoingWork(t *testing.T) {
	createNodes(t, simnode.Numbered("restart", 4, map[string]string{"pool": "restart"})...)
	c := k8sClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	created := countStagePods(t, "restart")

	one := 1
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "restart"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": "restart"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &one},
			Packages:           skyhookv1.Packages{"tuning": pkg("1.0.0", "ghcr.io/x/tuning", nil)},
		},
	}
	slow := sk.Spec.Packages["tuning"]
	slow.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1s"}}
	sk.Spec.Packages["tuning"] = slow
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	completeNodes := func() int {
		var nodes corev1.NodeList
		_ = c.List(ctx, &nodes, client.MatchingLabels{"pool": "restart", skyhookv1.StatusKey("restart"): "complete"})
		return len(nodes.Items)
	}
	eventually(t, "two nodes to complete", func() bool { return completeNodes() >= 2 })

	stopOperator()
	<-operatorDone
	if n := completeNodes(); n == 4 {
		t.Fatal("the rollout finished before the operator was stopped; the test proves nothing")
	}
	restart := time.Now()
	if err := startOperator(); err != nil {
		t.Fatal(err)
	}
	// How long the operator takes from start to webhooks answering
	// (go test -run TestOperatorRestart -v shows it; docs/testing.md).
	t.Logf("operator restarted: webhooks answer after %v", time.Since(restart).Round(10*time.Millisecond))
	waitSkyhook(t, "restart", time.Minute, isReady)

	runs := created()
	for node := range 4 {
		for _, stage := range []string{"apply", "config"} {
			key := "restart-" + string(rune('0'+node)) + "/" + stage
			if runs[key] != 1 {
				t.Errorf("%s: %d stage pods created, want exactly 1 (all: %v)", key, runs[key], runs)
			}
		}
	}
}
