package reconcile_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/cluster"
)

// budgetWatcher follows the nodes' status labels for a Skyhook and keeps
// the most nodes it saw in progress (or erroring) at the same time.
type budgetWatcher struct {
	mu     sync.Mutex
	status map[string]string
	most   int
}

func watchBudget(t *testing.T, pool, skyhook string) *budgetWatcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := env.Clientset.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: "pool=" + pool})
	if err != nil {
		t.Fatal(err)
	}
	b := &budgetWatcher{status: map[string]string{}}
	key := skyhookv1.StatusKey(skyhook)
	go func() {
		for ev := range w.ResultChan() {
			node, ok := ev.Object.(*corev1.Node)
			if !ok || ev.Type == watch.Error {
				continue
			}
			b.mu.Lock()
			b.status[node.Name] = node.Labels[key]
			busy := 0
			for _, s := range b.status {
				if s == string(skyhookv1.StatusInProgress) || s == string(skyhookv1.StatusErroring) {
					busy++
				}
			}
			b.most = max(b.most, busy)
			b.mu.Unlock()
		}
	}()
	return b
}

func (b *budgetWatcher) takeMost() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.most
	b.most = 0
	return m
}

// A budget of 3 over 15 nodes is a hard cap: a watcher on the nodes never
// sees more than 3 in progress, during the first install and during an
// upgrade, and the budget is used (3 at once), not undercut.
func TestBudgetCountIsNeverExceeded(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	watcher := watchBudget(t, "budget", "budget")
	three := 3
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "budget"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": "budget"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &three},
			Packages: skyhookv1.Packages{"tuning": {
				PackageRef: skyhookv1.PackageRef{Version: "1.0.0"},
				Image:      "ghcr.io/nvidia/tuning",
				Env:        []corev1.EnvVar{{Name: cluster.SimDurationEnv, Value: "700ms"}},
			}},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "budget", 2*time.Minute, isReady)
	if most := watcher.takeMost(); most != 3 {
		t.Fatalf("first install: at most %d nodes in progress at once, want exactly the budget of 3", most)
	}

	if err := c.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
		t.Fatal(err)
	}
	pkg := sk.Spec.Packages["tuning"]
	pkg.Version = "1.1.0"
	sk.Spec.Packages["tuning"] = pkg
	if err := c.Update(ctx, sk); err != nil {
		t.Fatal(err)
	}
	got := waitSkyhook(t, "budget", 2*time.Minute, func(s *skyhookv1.Skyhook) bool {
		return isReady(s) && s.Status.PackageList == "tuning:1.1.0"
	})
	if most := watcher.takeMost(); most != 3 {
		t.Fatalf("upgrade: at most %d nodes in progress at once, want exactly the budget of 3", most)
	}
	var node corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: "budget-14"}, &node); err != nil {
		t.Fatal(err)
	}
	if want := `{"tuning|1.1.0":{"name":"tuning","version":"1.1.0","image":"ghcr.io/nvidia/tuning","stage":"config","state":"complete","restarts":0}}`; node.Annotations["skyhook.nvidia.com/nodeState_budget"] != want {
		t.Errorf("after the upgrade the record is %s, want %s", node.Annotations["skyhook.nvidia.com/nodeState_budget"], want)
	}
	if got.Status.CompleteNodes != "15/15" {
		t.Errorf("status %+v", got.Status)
	}
}
