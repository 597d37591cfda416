package opupgrade

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// captureEnv set to 1 makes TestCaptureRecordFixtures write testdata/ anew.
const captureEnv = "SKYHOOK_OPUPGRADE_CAPTURE"

// TestCaptureRecordFixtures writes each fixture of olderFormats from a
// real run of the version that wrote the format: its operator binary
// (built from git history as the previous version is) rolls the fixture's
// Skyhook out over fixtureNodes KWOK nodes; the last node's reboot never
// ends, so once the others are complete it waits in its interrupt (phase
// verify); then the operator is SIGKILLed and the policy, the Skyhook and
// the nodes' skyhook.nvidia.com/ metadata are written as they are.
//
//	SKYHOOK_OPUPGRADE_CAPTURE=1 go test ./test/opupgrade -run TestCaptureRecordFixtures -v
func TestCaptureRecordFixtures(t *testing.T) {
	if os.Getenv(captureEnv) != "1" {
		t.Skipf("writes testdata/ anew from the old versions' binaries; set %s=1 to run it", captureEnv)
	}
	for _, f := range olderFormats {
		t.Run(f.name, func(t *testing.T) { capture(t, f) })
	}
}

func capture(t *testing.T, f recordFormat) {
	ctx := context.Background()
	binary, took, err := buildAt(f.commit)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the operator of %s (built in %s)", f.commit[:7], took.Round(100*time.Millisecond))
	var nodes []simnode.Node
	for i := range fixtureNodes {
		nodes = append(nodes, simnode.Node{Name: fixtureNodeName(f, i), Labels: map[string]string{fixtureLabel: f.name}})
	}
	if err := env.CreateNodes(ctx, nodes...); err != nil {
		t.Fatal(err)
	}
	hosts.SetDowntime(holdNode(f), time.Hour)

	c := testenv.Client(t, env)
	d := newDeployment(t)
	op := d.start(t, binary, "capture-"+f.name)
	for _, manifest := range []string{fixturePolicy(f), fixtureSkyhook(f)} {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, obj.GetKind()+" created through the old operator's webhooks", time.Minute, func() bool {
			op.running(t, d)
			return c.Create(ctx, obj.DeepCopy()) == nil
		})
	}
	testenv.Eventually(t, "every node but the last complete, the last in its reboot", 3*time.Minute, func() bool {
		op.running(t, d)
		for i := range fixtureNodes - 1 {
			if fixtureNodeStatus(t, fixtureNodeName(f, i), f.name) != skyhookv1.StatusComplete {
				return false
			}
		}
		n, err := env.Clientset.CoreV1().Nodes().Get(ctx, holdNode(f), metav1.GetOptions{})
		if err != nil {
			return false
		}
		r := interrupt.Read(n, skyhookv1.Skyhooks.Named(f.name))
		return r != nil && r.Phase == interrupt.PhaseVerify
	})
	time.Sleep(2 * time.Second) // the status of the last pass written
	op.kill()

	fx := &fixture{}
	fx.policy = get(t, c, "DeploymentPolicy", f.name)
	fx.skyhook = get(t, c, skyhookv1.SkyhookKind, f.name)
	for _, n := range nodes {
		node, err := env.Clientset.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fx.nodes = append(fx.nodes, nodeMetadata(node))
	}
	subject, _ := exec.Command("git", "log", "-1", "--format=%h %cs %s", f.commit).Output()
	header := fmt.Sprintf(`Node records as the operator of %s wrote them: %s.
That version: %s
Captured by TestCaptureRecordFixtures (%s=1) on %s: the Skyhook and
its DeploymentPolicy as stored, the skyhook.nvidia.com/ metadata of its %d
nodes, each node's cordon and boot ID; %s's reboot had been issued
and the node was not back when the operator was killed.`,
		f.commit[:7], f.what, strings.TrimSpace(string(subject)), captureEnv, time.Now().UTC().Format("2006-01-02"), fixtureNodes, holdNode(f))
	if err := writeFixture(f, header, fx); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", fixturePath(f))
	for _, n := range nodes {
		_ = env.Clientset.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
	}
}

func fixtureNodeStatus(t *testing.T, node, skyhook string) skyhookv1.Status {
	n, err := env.Clientset.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return skyhookv1.Status(n.Labels[skyhookv1.StatusKey(skyhook)])
}

// get reads a cluster-scoped object of this API as stored, without the
// fields the apiserver keeps for itself (its generation is kept: an
// interrupt record names the generation it is for).
func get(t *testing.T, c client.Client, kind, name string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(skyhookv1.GroupVersion.WithKind(kind))
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, obj); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"managedFields", "resourceVersion", "creationTimestamp"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", field)
	}
	return obj
}

// nodeMetadata is what a fixture keeps of a node: its name, its
// skyhook.nvidia.com/ labels and annotations (and the fixture's label),
// its cordon and its boot ID.
func nodeMetadata(n *corev1.Node) *unstructured.Unstructured {
	keep := func(m map[string]string) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if strings.HasPrefix(k, skyhookv1.MetadataPrefix+"/") || k == fixtureLabel {
				out[k] = v
			}
		}
		return out
	}
	obj := map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": n.Name, "labels": keep(n.Labels), "annotations": keep(n.Annotations)},
		"status":   map[string]any{"nodeInfo": map[string]any{"bootID": n.Status.NodeInfo.BootID}},
	}
	if n.Spec.Unschedulable {
		obj["spec"] = map[string]any{"unschedulable": true}
	}
	return &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
}
