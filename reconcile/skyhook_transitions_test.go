package reconcile_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

func pkg(version, image string, deps map[string]string) skyhookv1.Package {
	return skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Version: version}, Image: image, DependsOn: deps,
		Env: []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "300ms"}}}
}

// recordHistory follows one node's record of a Skyhook, every version of it.
func recordHistory(t *testing.T, node, skyhook string) func() []skyhookv1.NodeState {
	t.Helper()
	return recordHistoryOf(t, node, skyhookv1.Skyhooks.Named(skyhook))
}

// recordHistoryOf follows one node's record of a rollout of any kind, every
// version of it.
func recordHistoryOf(t *testing.T, node string, rollout skyhookv1.RolloutRef) func() []skyhookv1.NodeState {
	t.Helper()
	return testenv.Collect(t, watchNode(t, node), func(ev watch.Event) []skyhookv1.NodeState {
		n, ok := ev.Object.(*corev1.Node)
		if !ok {
			return nil
		}
		raw, ok := n.Annotations[rollout.NodeStateAnnotation()]
		var s skyhookv1.NodeState
		if !ok || json.Unmarshal([]byte(raw), &s) != nil {
			return nil
		}
		return []skyhookv1.NodeState{s}
	})
}

// watchNode watches the node named from now on.
func watchNode(t *testing.T, node string) watch.Interface {
	t.Helper()
	w, err := env.Clientset.CoreV1().Nodes().Watch(context.Background(), metav1.ListOptions{FieldSelector: "metadata.name=" + node})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Three packages with dependsOn: on each node a package starts only once the
// packages it depends on are complete there.
func TestDependsOnOrdersPackagesPerNode(t *testing.T) {
	createNodes(t, simnode.Numbered("deps", 2, map[string]string{"pool": "deps"})...)
	c := k8sClient(t)
	ctx := context.Background()
	history := recordHistory(t, "deps-0", "deps")
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "deps"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "deps"}},
			Packages: skyhookv1.Packages{
				"driver":  pkg("1.0.0", "ghcr.io/x/driver", nil),
				"toolkit": pkg("2.0.0", "ghcr.io/x/toolkit", map[string]string{"driver": "1.0.0"}),
				"monitor": pkg("3.0.0", "ghcr.io/x/monitor", map[string]string{"driver": "1.0.0", "toolkit": "2.0.0"}),
			},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "deps", time.Minute, isReady)

	complete := func(s skyhookv1.NodeState, key string) bool {
		e, ok := s[key]
		return ok && e.Stage == skyhookv1.StageConfig && e.State == skyhookv1.StateComplete
	}
	seen := map[string]bool{}
	for _, s := range history() {
		if _, ok := s["toolkit|2.0.0"]; ok && !seen["toolkit"] {
			seen["toolkit"] = true
			if !complete(s, "driver|1.0.0") {
				t.Errorf("toolkit started before driver completed: %v", s)
			}
		}
		if _, ok := s["monitor|3.0.0"]; ok && !seen["monitor"] {
			seen["monitor"] = true
			if !complete(s, "driver|1.0.0") || !complete(s, "toolkit|2.0.0") {
				t.Errorf("monitor started before its dependencies completed: %v", s)
			}
		}
	}
	if !seen["toolkit"] || !seen["monitor"] {
		t.Fatalf("the watcher saw no record with toolkit and monitor: %v", history())
	}
}

// uninstallPods follows the uninstall stage pods of a Skyhook as they are
// created, by package.
func uninstallPods(t *testing.T, skyhook string) func() map[string]*corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := env.Clientset.CoreV1().Pods(operatorNamespace).Watch(ctx, metav1.ListOptions{
		LabelSelector: stagepod.SkyhookLabel + "=" + skyhook + "," + stagepod.StageLabel + "=uninstall"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]*corev1.Pod{}
	go func() {
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				mu.Lock()
				for _, view := range stagepod.Views(pod) { // a pod of several packages under each
					seen[stagepod.PackageOf(view)] = view
				}
				mu.Unlock()
			}
		}
	}()
	return func() map[string]*corev1.Pod {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// Without uninstall support (NodeWright's newest semantics): a version
// down installs the new version beside the old record, and a removed
// package runs nothing; both old records stay on the node as markers that
// the package's files may still be there.
func TestDowngradeAndRemovalWithoutUninstallSupport(t *testing.T) {
	createNodes(t, simnode.Numbered("versions", 2, map[string]string{"pool": "versions"})...)
	c := k8sClient(t)
	ctx := context.Background()
	history := recordHistory(t, "versions-0", "versions")
	created := countStagePods(t, "versions")
	tuning := pkg("2.0.0", "ghcr.io/x/tuning", nil)
	tuning.ConfigMap = map[string]string{"mode.conf": "two"}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "versions"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "versions"}},
			Packages:     skyhookv1.Packages{"tuning": tuning, "extra": pkg("1.0.0", "ghcr.io/x/extra", nil)},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "versions", time.Minute, isReady)

	if err := c.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
		t.Fatal(err)
	}
	newer := pkg("1.5.0", "ghcr.io/x/tuning-new-image", nil)
	newer.ConfigMap = map[string]string{"mode.conf": "one-five"}
	sk.Spec.Packages["tuning"] = newer
	delete(sk.Spec.Packages, "extra")
	if err := c.Update(ctx, sk); err != nil {
		t.Fatal(err)
	}
	waitSkyhook(t, "versions", time.Minute, func(s *skyhookv1.Skyhook) bool { return isReady(s) && s.Status.PackageList == "tuning:1.5.0" })

	for _, s := range history() {
		for key, e := range s {
			if e.Stage == skyhookv1.StageUninstall {
				t.Errorf("%s was uninstalled: %v", key, s)
			}
		}
	}
	for key, n := range created() {
		if strings.HasSuffix(key, "/uninstall") || strings.HasSuffix(key, "/upgrade") {
			t.Errorf("%d %s stage pods; a downgrade without uninstall support applies, and a removal runs nothing", n, key)
		}
	}
	var node corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: "versions-0"}, &node); err != nil {
		t.Fatal(err)
	}
	want := `{"extra|1.0.0":{"name":"extra","version":"1.0.0","image":"ghcr.io/x/extra","stage":"config","state":"complete"},` +
		`"tuning|1.5.0":{"name":"tuning","version":"1.5.0","image":"ghcr.io/x/tuning-new-image","stage":"config","state":"complete"},` +
		`"tuning|2.0.0":{"name":"tuning","version":"2.0.0","image":"ghcr.io/x/tuning","stage":"config","state":"complete"}}`
	if got := node.Annotations["skyhook.nvidia.com/nodeState_versions"]; got != want {
		t.Errorf("final record\n%s\nwant\n%s", got, want)
	}
	if node.Labels["skyhook.nvidia.com/status_versions"] != "complete" {
		t.Errorf("status label %q: the markers do not hold the node", node.Labels["skyhook.nvidia.com/status_versions"])
	}
}

// A node that joins mid-rollout gets everything; a node deleted mid-rollout
// is forgotten and does not hold the rollout.
func TestNodesJoiningAndLeavingMidRollout(t *testing.T) {
	createNodes(t, simnode.Numbered("join", 2, map[string]string{"pool": "join"})...)
	c := k8sClient(t)
	ctx := context.Background()
	one := 1
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "join"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": "join"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &one},
			Packages:           skyhookv1.Packages{"tuning": pkg("1.0.0", "ghcr.io/x/tuning", nil)},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "join", time.Minute, func(s *skyhookv1.Skyhook) bool { return s.Status.NodesInProgress == 1 })

	if err := env.CreateNodes(ctx, simnode.Node{Name: "join-late", Labels: map[string]string{"pool": "join"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Clientset.CoreV1().Nodes().Delete(ctx, "join-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got := waitSkyhook(t, "join", time.Minute, isReady)
	if got.Status.CompleteNodes != "2/2" {
		t.Errorf("complete %s, want join-0 and join-late", got.Status.CompleteNodes)
	}
	var late corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: "join-late"}, &late); err != nil {
		t.Fatal(err)
	}
	if late.Labels["skyhook.nvidia.com/status_join"] != "complete" {
		t.Errorf("the late node is %q", late.Labels["skyhook.nvidia.com/status_join"])
	}
}
