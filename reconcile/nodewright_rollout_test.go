package reconcile_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// A NodeWright rolls out as a Skyhook does, by the same engine, writing
// what NodeWright v0.20 writes: its records, statuses and node conditions
// under nodewright.nvidia.com/, its finalizer, stage pods it owns, Ready
// and nodewright.nvidia.com/Ready. Deleted, it takes its keys off the
// nodes, and nothing of a Skyhook's.
func TestNodeWrightRollsOutUnderItsPrefix(t *testing.T) {
	createNodes(t, simnode.Numbered("nwready", 2, map[string]string{"pool": "nwready"})...)
	c := k8sClient(t)
	ctx := context.Background()
	nw := &nodewrightv1.NodeWright{
		ObjectMeta: metav1.ObjectMeta{Name: "nwready"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "nwready"}},
			Packages: skyhookv1.Packages{"tuning": {PackageRef: skyhookv1.PackageRef{Version: "1.1.0"},
				Image: "ghcr.io/nvidia/skyhook-packages/shellscript", ConfigMap: map[string]string{"apply.sh": "echo hello"}}},
		},
	}
	owned := watchStagePodOwners(t)
	if err := c.Create(ctx, nw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, nw) })

	got := waitNodeWright(t, "nwready", 2*time.Minute, func(nw *nodewrightv1.NodeWright) bool {
		return conditions.IsTrue(nw, meta.ReadyCondition) && nw.Status.ObservedGeneration == nw.Generation
	})
	if got.Status.CompleteNodes != "2/2" || got.Status.Status != skyhookv1.StatusComplete || !conditions.IsTrue(got, "nodewright.nvidia.com/Ready") ||
		conditions.Has(got, "skyhook.nvidia.com/Ready") || !slices.Contains(got.Finalizers, "nodewright.nvidia.com/nodewright") ||
		got.Annotations["nodewright.nvidia.com/version"] == "" {
		t.Errorf("NodeWright: finalizers %v, annotations %v, status %+v", got.Finalizers, got.Annotations, got.Status)
	}
	if kinds := owned(); len(kinds) != 4 || slices.ContainsFunc(kinds, func(k string) bool { return k != "NodeWright/nwready" }) {
		t.Errorf("stage pods owned by %v, want apply and config on 2 nodes, each owned by the NodeWright", kinds)
	}
	want := `{"tuning|1.1.0":{"name":"tuning","version":"1.1.0","image":"ghcr.io/nvidia/skyhook-packages/shellscript","stage":"config","state":"complete"}}`
	for _, n := range nodesOf(t, "nwready") {
		if n.Annotations["nodewright.nvidia.com/nodeState_nwready"] != want || n.Labels["nodewright.nvidia.com/status_nwready"] != "complete" {
			t.Errorf("node %s: annotations %v labels %v", n.Name, n.Annotations, n.Labels)
		}
		for key := range n.Annotations {
			if strings.HasPrefix(key, "skyhook.nvidia.com/") {
				t.Errorf("node %s has %s from a NodeWright", n.Name, key)
			}
		}
		if c := nodeCondition(&n, "nodewright.nvidia.com/nwready/NotReady"); c == nil || c.Status != corev1.ConditionFalse || c.Message != "NodeWright nwready Ready" {
			t.Errorf("node %s: NotReady condition %+v", n.Name, c)
		}
	}

	if err := c.Delete(ctx, nw); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the NodeWright to be gone and its status keys to leave the nodes", func() bool {
		if err := c.Get(ctx, client.ObjectKey{Name: "nwready"}, &nodewrightv1.NodeWright{}); !apierrors.IsNotFound(err) {
			return false
		}
		for _, n := range nodesOf(t, "nwready") {
			if _, ok := n.Labels["nodewright.nvidia.com/status_nwready"]; ok || nodeCondition(&n, "nodewright.nvidia.com/nwready/NotReady") != nil {
				return false
			}
		}
		return true
	})
}

// A Skyhook and a NodeWright on the same nodes are two rollouts with
// records of their own; and the one that goes first (the lower priority
// number) is complete on a node before the other starts there, across
// kinds, so the two never interrupt a node at once. (Of the same name they
// are one rollout: nodewright_twins_test.go.)
func TestSkyhookAndNodeWrightShareNodesInPriorityOrder(t *testing.T) {
	createNodes(t, simnode.Numbered("kinds", 2, map[string]string{"pool": "kinds"})...)
	c := k8sClient(t)
	ctx := context.Background()
	spec := func(priority int) skyhookv1.SkyhookSpec {
		one := 1
		return skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": "kinds"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &one},
			Priority:           priority,
			Packages: skyhookv1.Packages{"kernel": {PackageRef: skyhookv1.PackageRef{Version: "1.0.0"}, Image: "ghcr.io/x/kernel",
				Interrupt: &skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}}},
		}
	}
	busy := watchBusyKinds(t, "kinds", "kinds-sk", "kinds-nw")
	nw := &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: "kinds-nw"}, Spec: spec(1)}
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "kinds-sk"}, Spec: spec(2)}
	for _, obj := range []client.Object{sk, nw} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(ctx, obj) })
	}
	waitNodeWright(t, "kinds-nw", 3*time.Minute, func(nw *nodewrightv1.NodeWright) bool { return nw.Status.Status == skyhookv1.StatusComplete })
	waitSkyhook(t, "kinds-sk", 3*time.Minute, isReady)
	for _, n := range nodesOf(t, "kinds") {
		if n.Labels["skyhook.nvidia.com/status_kinds-sk"] != "complete" || n.Labels["nodewright.nvidia.com/status_kinds-nw"] != "complete" ||
			n.Annotations["skyhook.nvidia.com/nodeState_kinds-sk"] == "" || n.Annotations["nodewright.nvidia.com/nodeState_kinds-nw"] == "" {
			t.Errorf("node %s: labels %v", n.Name, n.Labels)
		}
		if hosts.Reboots()[n.Name] != 2 {
			t.Errorf("node %s rebooted %d times, want once for each", n.Name, hosts.Reboots()[n.Name])
		}
	}
	if overlaps := busy(); len(overlaps) > 0 {
		t.Errorf("both kinds worked on a node at once: %v", overlaps)
	}
}

func waitNodeWright(t *testing.T, name string, timeout time.Duration, cond func(*nodewrightv1.NodeWright) bool) *nodewrightv1.NodeWright {
	t.Helper()
	c := k8sClient(t)
	nw := &nodewrightv1.NodeWright{}
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, nw); err != nil {
			return false, nil
		}
		return cond(nw), nil
	})
	if err != nil {
		t.Fatalf("NodeWright %s: %v; status: %+v", name, err, nw.Status)
	}
	return nw
}

func nodesOf(t *testing.T, pool string) []corev1.Node {
	t.Helper()
	var nodes corev1.NodeList
	if err := k8sClient(t).List(context.Background(), &nodes, client.MatchingLabels{"pool": pool}); err != nil {
		t.Fatal(err)
	}
	return nodes.Items
}

func nodeCondition(n *corev1.Node, t string) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if string(n.Status.Conditions[i].Type) == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// watchStagePodOwners records the controller owner ("Kind/name") of each
// stage pod created from now on.
func watchStagePodOwners(t *testing.T) func() []string {
	t.Helper()
	w, err := env.Clientset.CoreV1().Pods(operatorNamespace).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Collect(t, w, func(ev watch.Event) []string {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type != watch.Added || !strings.HasPrefix(pod.Name, "nwready-") {
			return nil
		}
		var owners []string
		if owner := metav1.GetControllerOf(pod); owner != nil {
			for _, view := range stagepod.Views(pod) { // a pod of several packages once for each
				for range stagepod.Stages(view) { // a run's pod once for each of its stages
					owners = append(owners, owner.Kind+"/"+owner.Name)
				}
			}
		}
		return owners
	})
}

// watchBusyKinds records the nodes of the pool where the Skyhook and the
// NodeWright named were in progress at once.
func watchBusyKinds(t *testing.T, pool, skyhook, nodewright string) func() []string {
	t.Helper()
	w, err := env.Clientset.CoreV1().Nodes().Watch(context.Background(), metav1.ListOptions{LabelSelector: "pool=" + pool})
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Collect(t, w, func(ev watch.Event) []string {
		node, ok := ev.Object.(*corev1.Node)
		if ok && node.Labels["skyhook.nvidia.com/status_"+skyhook] == "in_progress" && node.Labels["nodewright.nvidia.com/status_"+nodewright] == "in_progress" {
			return []string{node.Name}
		}
		return nil
	})
}
