package reconcile_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/reconcile/taints"
)

// The runtime-required taint leaves a node only once every runtimeRequired
// Skyhook that selects it is complete there; with autoTaintNewNodes a node
// that joins later gets it, and loses it the same way.
func TestRuntimeRequiredTaintWaitsForEveryRuntimeRequiredSkyhook(t *testing.T) {
	createNodes(t, simnode.Node{Name: "rtreq-0", Labels: map[string]string{"pool": "rtreq"}, Taints: []corev1.Taint{stagepod.DefaultRuntimeRequiredTaint}})
	c := k8sClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// For each node: was it ever tainted, and did the taint go before rt-b
	// was complete there.
	var mu sync.Mutex
	early := map[string]bool{}
	tainted := map[string]bool{}
	w, err := env.Clientset.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: "pool=rtreq"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok {
				continue
			}
			has := taints.Has(n, stagepod.DefaultRuntimeRequiredTaint)
			mu.Lock()
			if has {
				tainted[n.Name] = true
			}
			if !has && tainted[n.Name] && n.Labels[skyhookv1.StatusKey("rt-b")] != "complete" {
				early[n.Name] = true // the taint went before rt-b was done
			}
			mu.Unlock()
		}
	}()
	slow := pkg("1.0.0", "ghcr.io/x/slow", nil)
	slow.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1s"}}
	skyhook := func(name string, priority int, p skyhookv1.Package) *skyhookv1.Skyhook {
		return &skyhookv1.Skyhook{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: skyhookv1.SkyhookSpec{
				NodeSelector:    metav1.LabelSelector{MatchLabels: map[string]string{"pool": "rtreq"}},
				RuntimeRequired: true, AutoTaintNewNodes: true, Priority: priority,
				Packages: skyhookv1.Packages{"tuning": p},
			},
		}
	}
	a, b := skyhook("rt-a", 100, pkg("1.0.0", "ghcr.io/x/fast", nil)), skyhook("rt-b", 200, slow)
	for _, sk := range []*skyhookv1.Skyhook{a, b} {
		if err := c.Create(ctx, sk); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	}
	waitSkyhook(t, "rt-b", time.Minute, isReady)
	eventually(t, "the taint to leave rtreq-0", func() bool { return !taints.Has(getNode(t, "rtreq-0"), stagepod.DefaultRuntimeRequiredTaint) })

	if err := env.CreateNodes(ctx, simnode.Node{Name: "rtreq-late", Labels: map[string]string{"pool": "rtreq"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Clientset.CoreV1().Nodes().Delete(context.Background(), "rtreq-late", metav1.DeleteOptions{})
	})
	eventually(t, "the late node to be done by both", func() bool {
		n := getNode(t, "rtreq-late")
		return n.Labels[skyhookv1.StatusKey("rt-a")] == "complete" && n.Labels[skyhookv1.StatusKey("rt-b")] == "complete" &&
			!taints.Has(n, stagepod.DefaultRuntimeRequiredTaint)
	})
	mu.Lock()
	defer mu.Unlock()
	if early["rtreq-0"] || early["rtreq-late"] {
		t.Errorf("the taint left before rt-b was complete: %v", early)
	}
	if !tainted["rtreq-late"] {
		t.Error("the node that joined later was never tainted (autoTaintNewNodes)")
	}
	if mark := getNode(t, "rtreq-late").Annotations["skyhook.nvidia.com/autoTaint_skyhook.nvidia.com"]; mark != "true" {
		t.Errorf("the auto-tainted node lacks NodeWright's autoTaint_ mark: %q", mark)
	}
}
