package reconcile_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/reconcile/taints"
)

// autoTaintNewNodes taints the nodes no Skyhook has touched (no
// skyhook.nvidia.com/ annotation), as NodeWright does: one that was there
// before the Skyhook gets the taint and NodeWright's autoTaint_ mark, and
// loses the taint once complete; one carrying another Skyhook's marks is
// not new and is never tainted.
func TestAutoTaintNewNodesTaintsUntouchedNodes(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	createNodes(t,
		simnode.Node{Name: "autotaint-fresh", Labels: map[string]string{"pool": "autotaint"}},
		simnode.Node{Name: "autotaint-touched", Labels: map[string]string{"pool": "autotaint"}},
	)
	mark := []byte(`{"metadata":{"annotations":{"skyhook.nvidia.com/status_some-other-skyhook":"complete"}}}`)
	if _, err := env.Clientset.CoreV1().Nodes().Patch(ctx, "autotaint-touched", types.MergePatchType, mark, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := env.Clientset.CoreV1().Nodes().Watch(wctx, metav1.ListOptions{LabelSelector: "pool=autotaint"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	tainted := map[string]bool{}
	go func() {
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok && taints.Has(n, stagepod.DefaultRuntimeRequiredTaint) {
				mu.Lock()
				tainted[n.Name] = true
				mu.Unlock()
			}
		}
	}()

	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "autotaint"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:    metav1.LabelSelector{MatchLabels: map[string]string{"pool": "autotaint"}},
			RuntimeRequired: true, AutoTaintNewNodes: true,
			Packages: skyhookv1.Packages{"tuning": pkg("1.0.0", "ghcr.io/x/tuning", nil)},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	waitSkyhook(t, "autotaint", time.Minute, isReady)
	eventually(t, "the taint to leave autotaint-fresh", func() bool {
		return !taints.Has(getNode(t, "autotaint-fresh"), stagepod.DefaultRuntimeRequiredTaint)
	})

	mu.Lock()
	defer mu.Unlock()
	if !tainted["autotaint-fresh"] {
		t.Error("the node no Skyhook had touched, there before the Skyhook, was never tainted")
	}
	if tainted["autotaint-touched"] {
		t.Error("the node carrying another Skyhook's marks was tainted: it is not new")
	}
	if got := getNode(t, "autotaint-fresh").Annotations["skyhook.nvidia.com/autoTaint_skyhook.nvidia.com"]; got != "true" {
		t.Errorf("the auto-tainted node lacks NodeWright's autoTaint_ mark: %q", got)
	}
}
