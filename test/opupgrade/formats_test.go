package opupgrade

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// TestOlderNodeRecordFormats: for each older format of node records (see
// recordFormat; testdata/ holds one fixture per format, taken from a run
// of the version that wrote it), the cluster holds what that version left
// (the DeploymentPolicy, the Skyhook at its generation with its status,
// three nodes complete and one cordoned and waiting for its reboot) and
// the current operator starts. It runs no stage for the completed work
// and leaves the complete nodes' records as they are; it waits for the
// fourth node's reboot without running the interrupt again, and once the
// node is back with a new boot ID runs its post-interrupt stage only and
// lifts the cordon. (The current format is covered by
// TestUpgradeMidRollout, where the previous version writes it.)
func TestOlderNodeRecordFormats(t *testing.T) {
	for _, f := range olderFormats {
		t.Run(f.name, func(t *testing.T) { resumeFrom(t, f) })
	}
}

func resumeFrom(t *testing.T, f recordFormat) {
	ctx := context.Background()
	fx, err := readFixture(f)
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.Client(t, env)
	policy := fx.policy.DeepCopy()
	unstructured.RemoveNestedField(policy.Object, "metadata", "uid")
	if err := c.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	sk := createAtGeneration(t, c, fx.skyhook)
	nodes := installNodes(t, fx, fx.skyhook.GetUID(), sk.GetUID())
	hold := holdNode(f)
	before := map[string]map[string]string{}
	for _, n := range nodes {
		node, err := env.Clientset.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before[n] = node.Annotations
	}

	pods := watchStagePods(t, f.name)
	d := newDeployment(t)
	op := d.start(t, currentBinary, "resume-"+f.name)
	t.Cleanup(func() { deleteWhileRunning(t, c, f.name) })

	// The operator takes the Skyhook up (it stamps it with its version);
	// a few seconds more give a wrong stage pod room to show up.
	testenv.Eventually(t, "the current operator to take the Skyhook up", time.Minute, func() bool {
		op.running(t, d)
		var got skyhookv1.Skyhook
		return c.Get(ctx, client.ObjectKey{Name: f.name}, &got) == nil && got.Annotations[skyhookv1.SkyhookVersionAnnotation] == currentVersion
	})
	time.Sleep(3 * time.Second)
	if made := pods.all(); len(made) > 0 {
		t.Fatalf("stage pods before the node came back from its reboot: %v", made)
	}
	node, err := env.Clientset.CoreV1().Nodes().Get(ctx, hold, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := interrupt.Read(node, skyhookv1.Skyhooks.Named(f.name)); r == nil || r.Phase != interrupt.PhaseVerify || !node.Spec.Unschedulable {
		t.Fatalf("node %s, waiting for its reboot, is no longer: interrupt record %s, unschedulable %v",
			hold, node.Annotations[skyhookv1.InterruptAnnotation(f.name)], node.Spec.Unschedulable)
	}

	// The node comes back from the reboot the old operator issued.
	if err := env.Reboot(ctx, hold, "boot-after-upgrade", 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var done skyhookv1.Skyhook
	testenv.Eventually(t, "the Skyhook Ready", time.Minute, func() bool {
		op.running(t, d)
		return c.Get(ctx, client.ObjectKey{Name: f.name}, &done) == nil && done.Status.ObservedGeneration == done.Generation &&
			done.Status.Status == skyhookv1.StatusComplete && conditions.IsReady(&done)
	})

	var ran []string
	for _, p := range pods.all() {
		ran = append(ran, p.key())
		if !p.succeeded {
			t.Errorf("stage pod %s (%s) did not succeed", p.name, p.key())
		}
	}
	if want := hold + "/kernel@1.0.0/post-interrupt"; len(ran) != 1 || ran[0] != want {
		t.Errorf("stage pods %v, want only %s", ran, want)
	}
	for _, n := range nodes {
		if reboots := hosts.Reboots()[n]; reboots > 0 {
			t.Errorf("node %s rebooted again for an interrupt pod (%d)", n, reboots)
		}
		node, err := env.Clientset.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n == hold {
			checkNodeEnd(t, node, f.name, wantRecord, currentVersion)
			continue
		}
		checkNodeEnd(t, node, f.name, wantRecord, "")
		for k, v := range before[n] {
			if strings.HasPrefix(k, skyhookv1.MetadataPrefix+"/") && node.Annotations[k] != v {
				t.Errorf("node %s, complete in the old format: %s rewritten from %s to %s", n, k, v, node.Annotations[k])
			}
		}
	}
}

// createAtGeneration creates the Skyhook of a fixture with its
// annotations, finalizers and status, at the generation it had (an
// interrupt record names the generation it is for): created with another
// priority and updated until the spec is the fixture's at that generation.
// No operator runs, so no webhook changes it.
func createAtGeneration(t *testing.T, c client.Client, fixture *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	want := fixture.GetGeneration()
	spec, _, _ := unstructured.NestedMap(fixture.Object, "spec")
	priority, _, _ := unstructured.NestedInt64(spec, "priority")
	sk := fixture.DeepCopy()
	status := sk.Object["status"]
	delete(sk.Object, "status")
	unstructured.RemoveNestedField(sk.Object, "metadata", "uid")
	unstructured.RemoveNestedField(sk.Object, "metadata", "generation")
	for g := int64(1); g <= want; g++ {
		s := spec
		if g < want {
			s = runtime.DeepCopyJSON(spec)
			s["priority"] = priority + g
		}
		sk.Object["spec"] = s
		var err error
		if g == 1 {
			err = c.Create(ctx, sk)
		} else {
			err = c.Update(ctx, sk)
		}
		if err != nil {
			t.Fatalf("writing the Skyhook of %s at generation %d: %v", fixture.GetName(), g, err)
		}
	}
	if sk.GetGeneration() != want {
		t.Fatalf("the Skyhook is at generation %d, want %d", sk.GetGeneration(), want)
	}
	sk.Object["status"] = status
	if err := c.Status().Update(ctx, sk); err != nil {
		t.Fatalf("writing the Skyhook's status: %v", err)
	}
	return sk
}

// sinceField is the start of the interrupt record's current phase.
var sinceField = regexp.MustCompile(`"since":"[^"]*"`)

// installNodes creates the fixture's nodes (booted with their recorded boot
// ID) with their labels, annotations and cordon. Two things are moved to
// this run as they were to the old one: the Skyhook's UID in the cordon's
// signature (the Skyhook was created again), and the start of the
// interrupt's phase (the fixture was taken long ago; to the operator, the
// reboot was issued just now, not beyond its reboot timeout).
func installNodes(t *testing.T, fx *fixture, oldUID, newUID types.UID) []string {
	t.Helper()
	ctx := context.Background()
	var nodes []simnode.Node
	for _, n := range fx.nodes {
		bootID, _, _ := unstructured.NestedString(n.Object, "status", "nodeInfo", "bootID")
		nodes = append(nodes, simnode.Node{Name: n.GetName(), Labels: n.GetLabels(), BootID: bootID})
	}
	if err := env.CreateNodes(ctx, nodes...); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, n := range fx.nodes {
		names = append(names, n.GetName())
		annotations := map[string]string{}
		for k, v := range n.GetAnnotations() {
			if k == cordon.Annotation {
				v = strings.ReplaceAll(v, string(oldUID), string(newUID))
			}
			if strings.HasPrefix(k, skyhookv1.InterruptPrefix) {
				v = sinceField.ReplaceAllString(v, `"since":"`+time.Now().UTC().Format(time.RFC3339Nano)+`"`)
			}
			annotations[k] = v
		}
		unschedulable, _, _ := unstructured.NestedBool(n.Object, "spec", "unschedulable")
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations},
			"spec": map[string]any{"unschedulable": unschedulable}})
		if _, err := env.Clientset.CoreV1().Nodes().Patch(ctx, nodes[i].Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, n := range names {
			_ = env.Clientset.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	return names
}

// deleteWhileRunning deletes the fixture's Skyhook and policy while the
// operator still runs (it holds the Skyhook's finalizer), so that the
// tests after this one see neither.
func deleteWhileRunning(t *testing.T, c client.Client, name string) {
	if !deleteSkyhook(t, c, name) {
		return
	}
	if err := c.Delete(context.Background(), &skyhookv1.DeploymentPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Errorf("deleting the DeploymentPolicy: %v", err)
	}
}
