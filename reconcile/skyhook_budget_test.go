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
	"github.com/skyhook-go/skyhook/test/testenv"
)

// A budget of 3 over 15 nodes is a hard cap: a watcher on the nodes never
// sees more than 3 in progress, during the first install and during an
// upgrade, and the budget is used (3 at once), not undercut. Nodes waiting
// for the upgrade say waiting, not complete.
func TestBudgetCountIsNeverExceeded(t *testing.T) {
	createNodes(t, simnode.Numbered("budget", 15, map[string]string{"pool": "budget"})...)
	c := k8sClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watcher, err := testenv.WatchBusyNodes(ctx, env, "pool=budget", skyhookv1.Skyhooks.Named("budget"))
	if err != nil {
		t.Fatal(err)
	}
	// A node keeps its slot until its stage pods are gone, so the nodes
	// with a live stage pod never outnumber the budget either.
	podNodes, err := testenv.WatchPodNodes(ctx, env, operatorNamespace, skyhookv1.Skyhooks.Named("budget"))
	if err != nil {
		t.Fatal(err)
	}
	three := 3
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "budget"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": "budget"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &three},
			Packages: skyhookv1.Packages{"tuning": {
				PackageRef: skyhookv1.PackageRef{Version: "1.0.0"},
				Image:      "ghcr.io/nvidia/tuning",
				Env:        []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "700ms"}},
			}},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "budget", 2*time.Minute, isReady)
	if most := watcher.TakeMost(); most != 3 {
		t.Fatalf("first install: at most %d nodes in progress at once, want exactly the budget of 3", most)
	}
	if most := podNodes.TakeMost(); most != 3 {
		t.Fatalf("first install: at most %d nodes had a live stage pod at once, want exactly the budget of 3", most)
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
	if most := watcher.TakeMost(); most != 3 {
		t.Fatalf("upgrade: at most %d nodes in progress at once, want exactly the budget of 3", most)
	}
	if most := podNodes.TakeMost(); most != 3 {
		t.Fatalf("upgrade: at most %d nodes had a live stage pod at once, want exactly the budget of 3", most)
	}
	// The nodes the budget held back said so instead of still saying
	// complete for the old version.
	if seen := watcher.Seen(string(skyhookv1.StatusWaiting)); seen < 12 {
		t.Errorf("%d nodes were seen waiting for the upgrade, want at least the 12 outside the first batch", seen)
	}
	var node corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: "budget-14"}, &node); err != nil {
		t.Fatal(err)
	}
	if want := `{"tuning|1.1.0":{"name":"tuning","version":"1.1.0","image":"ghcr.io/nvidia/tuning","stage":"config","state":"complete"}}`; node.Annotations["skyhook.nvidia.com/nodeState_budget"] != want {
		t.Errorf("after the upgrade the record is %s, want %s", node.Annotations["skyhook.nvidia.com/nodeState_budget"], want)
	}
	if got.Status.CompleteNodes != "15/15" {
		t.Errorf("status %+v", got.Status)
	}
}
