// Package takeover_test takes over from NodeWright: the nodes and the
// Skyhook exactly as its operator left them (captured from a real run,
// test/reference/testdata/upstream-written/after-install.yaml), and variants
// of them, are in the cluster before this operator starts; then it runs.
package takeover_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/clustertest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

var env *cluster.Cluster

const namespace = "skyhook-system"

func TestMain(m *testing.M) {
	crds, err := config.CRDs()
	if err != nil {
		panic(err)
	}
	os.Exit(clustertest.Main(m, cluster.Options{CRDs: crds}, &env, func(ctx context.Context, c *cluster.Cluster) error {
		c.SimulateHosts(ctx, time.Second) // reboots for interrupt pods that ask for one
		return testenv.OperatorLogs(c)
	}))
}

// fixture is what NodeWright left: one node's metadata (every node of the
// run looked the same) and the Skyhook, status included.
type fixture struct {
	nodeLabels, nodeAnnotations map[string]string
	skyhook                     *unstructured.Unstructured
}

func loadFixture(t *testing.T) fixture {
	t.Helper()
	ref, err := testenv.ReferenceDir()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(ref, "testdata", "upstream-written", "after-install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatal(err)
		}
		switch obj.GetKind() {
		case "Node":
			f.nodeLabels, f.nodeAnnotations = obj.GetLabels(), obj.GetAnnotations()
		case skyhookv1.SkyhookKind:
			f.skyhook = &obj
		}
	}
	if f.skyhook == nil || f.nodeAnnotations == nil {
		t.Fatal("the fixture lacks its node or its Skyhook")
	}
	return f
}

// install puts the fixture in the cluster as NodeWright left it, before
// this operator runs: nodes sim-node-1..n with the fixture's metadata
// (changed by node, for the variants), the Skyhook with its finalizer and
// its status.
func install(t *testing.T, f fixture, n int, annotate func(node string, annotations map[string]string)) {
	t.Helper()
	ctx := context.Background()
	c := testenv.Client(t, env)
	var nodes []simnode.Node
	for i := 1; i <= n; i++ {
		nodes = append(nodes, simnode.Node{Name: fmt.Sprintf("sim-node-%d", i), Labels: f.nodeLabels})
	}
	if err := env.CreateNodes(ctx, nodes...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, node := range nodes {
			_ = env.Clientset.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
		}
	})
	for _, node := range nodes {
		annotations := map[string]string{}
		for k, v := range f.nodeAnnotations {
			annotations[k] = v
		}
		if annotate != nil {
			annotate(node.Name, annotations)
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
		if _, err := env.Clientset.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sk := f.skyhook.DeepCopy()
	status := sk.Object["status"]
	delete(sk.Object, "status")
	if err := c.Create(ctx, sk); err != nil {
		t.Fatalf("creating NodeWright's Skyhook: %v", err)
	}
	sk.Object["status"] = status
	if err := c.Status().Update(ctx, sk); err != nil {
		t.Fatalf("writing NodeWright's status: %v", err)
	}
}

// startOperator runs this operator until the test ends, then removes the
// webhook configurations it made, so the next test installs its fixture as
// NodeWright would, with no operator answering.
func startOperator(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := operator.EnsureNamespace(ctx, env.Config, namespace); err != nil {
		cancel()
		t.Fatal(err)
	}
	done, err := operator.StartLocal(ctx, env.Config, operator.Options{Namespace: namespace})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		<-done
		cs := env.Clientset.AdmissionregistrationV1()
		_ = cs.MutatingWebhookConfigurations().Delete(context.Background(), config.MutatingWebhookName, metav1.DeleteOptions{})
		_ = cs.ValidatingWebhookConfigurations().Delete(context.Background(), config.ValidatingWebhookName, metav1.DeleteOptions{})
	})
}

// stagePods records the stage pods created from now on, by "node/stage".
func stagePods(t *testing.T) func() map[string]int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := env.Clientset.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: stagepod.SkyhookLabel})
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Tally(t, w, func(ev watch.Event) []string {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type != watch.Added {
			return nil
		}
		var keys []string
		for _, view := range stagepod.Views(pod) { // a pod of several packages under each
			for _, stage := range stagepod.Stages(view) { // a run's pod under each of its stages
				keys = append(keys, pod.Spec.NodeName+"/"+string(stage))
			}
		}
		return keys
	})
}

func waitReady(t *testing.T, name string) *skyhookv1.Skyhook {
	t.Helper()
	c := testenv.Client(t, env)
	var sk skyhookv1.Skyhook
	testenv.Eventually(t, "Skyhook "+name+" Ready for its generation", 90*time.Second, func() bool {
		return c.Get(context.Background(), client.ObjectKey{Name: name}, &sk) == nil &&
			conditions.IsReady(&sk) && sk.Status.ObservedGeneration == sk.Generation && sk.Status.Status == skyhookv1.StatusComplete
	})
	return &sk
}

// deleteAndWait deletes the Skyhook and waits until it is gone: the
// finalizer (NodeWright's name) is this operator's to remove.
func deleteAndWait(t *testing.T, name string) {
	t.Helper()
	c := testenv.Client(t, env)
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Delete(context.Background(), sk); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the Skyhook to be gone", time.Minute, func() bool {
		return apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKey{Name: name}, sk))
	})
}

func node(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n, err := env.Clientset.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The captured rollout, complete on 20 nodes: this operator reads it
// Ready, runs no stage pod, keeps NodeWright's finalizer, and deleting the
// Skyhook finishes (the package has no uninstall support, so its record
// stays on the nodes, as NodeWright leaves it).
func TestTakeoverOfACompleteRollout(t *testing.T) {
	f := loadFixture(t)
	install(t, f, 20, nil)
	created := stagePods(t)
	startOperator(t)

	sk := waitReady(t, "anchor")
	if sk.Status.CompleteNodes != "20/20" {
		t.Errorf("complete %s, want 20/20", sk.Status.CompleteNodes)
	}
	if len(sk.Finalizers) != 1 || sk.Finalizers[0] != "skyhook.nvidia.com/skyhook" {
		t.Errorf("finalizers %v, want NodeWright's only", sk.Finalizers)
	}
	if e := sk.Status.NodeState["sim-node-7"]["demo|1.0.0"]; e.State != skyhookv1.StateComplete || e.Stage != skyhookv1.StageConfig {
		t.Errorf("status.nodeState of sim-node-7: %+v", sk.Status.NodeState["sim-node-7"])
	}
	time.Sleep(3 * time.Second) // room for a wrong stage pod to show up
	if pods := created(); len(pods) != 0 {
		t.Fatalf("stage pods created for completed work: %v", pods)
	}
	if got := node(t, "sim-node-3").Annotations["skyhook.nvidia.com/nodeState_anchor"]; got != f.nodeAnnotations["skyhook.nvidia.com/nodeState_anchor"] {
		t.Errorf("record rewritten: %s", got)
	}

	deleteAndWait(t, "anchor")
	n := node(t, "sim-node-3")
	if _, ok := n.Labels["skyhook.nvidia.com/status_anchor"]; ok {
		t.Errorf("status label left: %v", n.Labels)
	}
	if n.Annotations["skyhook.nvidia.com/nodeState_anchor"] == "" {
		t.Error("the record of a package without uninstall support was removed")
	}
}

// Variants written from the fixture: on sim-node-2 the package's apply was
// in progress (its pod, in NodeWright's namespace, is gone), on sim-node-3
// it was erroring after two restarts. Only those two nodes run stages, each
// from the stage it was in; the others run nothing.
func TestTakeoverResumesInFlightAndErroringNodes(t *testing.T) {
	f := loadFixture(t)
	install(t, f, 4, func(node string, a map[string]string) {
		switch node {
		case "sim-node-2":
			a["skyhook.nvidia.com/nodeState_anchor"] = `{"demo|1.0.0":{"name":"demo","version":"1.0.0","image":"ghcr.io/nvidia/skyhook-packages/shellscript","stage":"apply","state":"in_progress"}}`
			a["skyhook.nvidia.com/status_anchor"] = "in_progress"
		case "sim-node-3":
			a["skyhook.nvidia.com/nodeState_anchor"] = `{"demo|1.0.0":{"name":"demo","version":"1.0.0","image":"ghcr.io/nvidia/skyhook-packages/shellscript","stage":"apply","state":"erroring","restarts":2}}`
			a["skyhook.nvidia.com/status_anchor"] = "erroring"
		}
	})
	created := stagePods(t)
	startOperator(t)

	waitReady(t, "anchor")
	want := map[string]int{"sim-node-2/apply": 1, "sim-node-2/config": 1, "sim-node-3/apply": 1, "sim-node-3/config": 1}
	if got := created(); !equalCounts(got, want) {
		t.Errorf("stage pods %v, want %v", got, want)
	}
	deleteAndWait(t, "anchor")
}

// A variant mid-interrupt: the package asks for a reboot and NodeWright had
// cordoned sim-node-1 (its cordon_anchor mark, no signature of this
// operator) for it. This operator takes the cordon for the Skyhook's, runs
// the interrupt and the post-interrupt stage, and lifts the cordon and the
// mark; the complete node is left alone.
func TestTakeoverFinishesAnInterruptedNode(t *testing.T) {
	f := loadFixture(t)
	packages, _, _ := unstructured.NestedMap(f.skyhook.Object, "spec", "packages", "demo")
	packages["interrupt"] = map[string]any{"type": "reboot"}
	if err := unstructured.SetNestedMap(f.skyhook.Object, packages, "spec", "packages", "demo"); err != nil {
		t.Fatal(err)
	}
	install(t, f, 2, func(node string, a map[string]string) {
		a["skyhook.nvidia.com/nodeState_anchor"] = `{"demo|1.0.0":{"name":"demo","version":"1.0.0","image":"ghcr.io/nvidia/skyhook-packages/shellscript","stage":"post-interrupt","state":"complete"}}`
		if node == "sim-node-1" {
			a["skyhook.nvidia.com/nodeState_anchor"] = `{"demo|1.0.0":{"name":"demo","version":"1.0.0","image":"ghcr.io/nvidia/skyhook-packages/shellscript","stage":"interrupt","state":"in_progress"}}`
			a["skyhook.nvidia.com/status_anchor"] = "in_progress"
			a["skyhook.nvidia.com/cordon_anchor"] = "true"
		}
	})
	cordon, _ := json.Marshal(map[string]any{"spec": map[string]any{"unschedulable": true}})
	if _, err := env.Clientset.CoreV1().Nodes().Patch(context.Background(), "sim-node-1", types.MergePatchType, cordon, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	created := stagePods(t)
	startOperator(t)

	waitReady(t, "anchor")
	want := map[string]int{"sim-node-1/interrupt": 1, "sim-node-1/post-interrupt": 1}
	if got := created(); !equalCounts(got, want) {
		t.Errorf("stage pods %v, want %v", got, want)
	}
	n := node(t, "sim-node-1")
	if n.Spec.Unschedulable || n.Annotations["skyhook.nvidia.com/cordon_anchor"] != "" {
		t.Errorf("cordon left: unschedulable %v, cordon_anchor %q", n.Spec.Unschedulable, n.Annotations["skyhook.nvidia.com/cordon_anchor"])
	}
	deleteAndWait(t, "anchor")
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
