package reconcile_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// Once a Skyhook is rolled out, a change of one node costs a pass over that
// node only; a change of the spec, a pass over every node.
func TestPassVisitsOnlyTheChangedNode(t *testing.T) {
	const nodes = 8
	c := k8sClient(t)
	ctx := context.Background()
	createNodes(t, simnode.Numbered("incr", nodes, map[string]string{"pool": "incr"})...)
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "incr"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "incr"}},
			Packages: skyhookv1.Packages{"tuning": {
				PackageRef: skyhookv1.PackageRef{Version: "1.0.0"},
				Image:      "ghcr.io/nvidia/tuning",
				Env:        []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "100ms"}},
			}},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, sk.Name, 2*time.Minute, isReady)

	visited := func() float64 {
		return testenv.MetricSum(t, "skyhook_pass_nodes_visited_total", map[string]string{"skyhook": sk.Name})
	}
	passes := func(kind string) float64 {
		return testenv.MetricSum(t, "skyhook_passes_total", map[string]string{"skyhook": sk.Name, "kind": kind})
	}
	// Let the last stage pods' deletions and the status writes settle: no
	// visit for 3 s (on a loaded machine a pod's delete event can come more
	// than a second after the pass that deleted it).
	settle := func() {
		t.Helper()
		last, quiet := -1.0, 0
		if err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(context.Context) (bool, error) {
			now := visited()
			if now == last {
				quiet++
			} else {
				quiet = 0
			}
			last = now
			return quiet >= 3, nil
		}); err != nil {
			t.Fatalf("passes did not settle: %v", err)
		}
	}
	settle()

	visitedBefore, fullBefore, incrementalBefore := visited(), passes("full"), passes("incremental")
	if err := patchNode(ctx, c, "incr-3", true, map[string]any{"rack": "b7"}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return passes("incremental") > incrementalBefore, nil
	}); err != nil {
		t.Fatal("no pass followed the node's change")
	}
	settle()
	if d := visited() - visitedBefore; d != 1 {
		t.Errorf("a change of one node visited %v nodes, want 1", d)
	}
	if d := passes("full") - fullBefore; d != 0 {
		t.Errorf("a change of one node brought %v full passes, want none", d)
	}

	visitedBefore, fullBefore = visited(), passes("full")
	if err := c.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
		t.Fatal(err)
	}
	sk.Spec.InterruptionBudget.Count = ptr.To(2) // a spec change that runs nothing
	if err := c.Update(ctx, sk); err != nil {
		t.Fatal(err)
	}
	waitSkyhook(t, sk.Name, time.Minute, func(s *skyhookv1.Skyhook) bool { return isReady(s) && s.Status.ObservedGeneration == s.Generation })
	settle()
	if d := passes("full") - fullBefore; d < 1 {
		t.Errorf("a spec change brought %v full passes, want one", d)
	}
	if d := visited() - visitedBefore; d < nodes {
		t.Errorf("a spec change visited %v nodes, want all %d", d, nodes)
	}
}
