package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// Flux's health checks and kubectl wait read a NodeWright as they read a
// Skyhook: InProgress while it rolls, Current when done, and
// `kubectl wait --for=condition=Ready nodewright/<name>` returns then.
func TestNodeWrightKstatusAndKubectlWait(t *testing.T) {
	createNodes(t, simnode.Numbered("nwkstatus", 1, map[string]string{"pool": "nwkstatus"})...)
	c := k8sClient(t)
	ctx := context.Background()
	p := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "2s"}}
	nw := &nodewrightv1.NodeWright{
		ObjectMeta: metav1.ObjectMeta{Name: "nwkstatus"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "nwkstatus"}},
			Packages:     skyhookv1.Packages{"tuning": p},
		},
	}
	if err := c.Create(ctx, nw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, nw) })
	asNodeWright := nodewrightv1.GroupVersion.WithKind(skyhookv1.NodeWrights.Kind)
	if got := kstatusAs(t, nw, asNodeWright); got == status.CurrentStatus {
		t.Errorf("a NodeWright as created reads as %s; want not Current before the operator acted", got)
	}
	rolling := waitNodeWright(t, "nwkstatus", time.Minute, func(nw *nodewrightv1.NodeWright) bool { return conditions.IsReconciling(nw) })
	if got := kstatusAs(t, rolling, asNodeWright); got != status.InProgressStatus {
		t.Errorf("while rolling: %s, want InProgress", got)
	}
	if out, err := env.Kubectl("wait", "--for=condition=Ready", "--timeout=60s", "nodewright/nwkstatus"); err != nil {
		t.Fatalf("kubectl wait --for=condition=Ready nodewright/nwkstatus: %v\n%s", err, out)
	}
	// Flux's patch helper writes a status change in two requests, the
	// conditions first and then the rest: a read between them has Ready
	// with the counters of the write before. Done is when both landed.
	done := waitNodeWright(t, "nwkstatus", time.Minute, func(nw *nodewrightv1.NodeWright) bool {
		return conditions.IsReady(nw) && nw.Status.Status == skyhookv1.StatusComplete
	})
	if got := kstatusAs(t, done, asNodeWright); got != status.CurrentStatus {
		t.Errorf("when done: %s, want Current (conditions %+v)", got, done.Status.Conditions)
	}
	if done.Status.CompleteNodes != "1/1" {
		t.Errorf("Ready with %s nodes complete, want 1/1", done.Status.CompleteNodes)
	}
}
