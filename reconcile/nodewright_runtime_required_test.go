package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/taints"
)

// NodeWright v0.18-v0.20's runtime-required taint: a NodeWright gates new
// nodes with its own key (nodewright.nvidia.com=runtime-required), a node
// carrying the old skyhook.nvidia.com one counts as gated already and loses
// it too; with runtimeRequiredCordonAfter the write that lifts the taint
// cordons the node (runtimeRequiredCordon), a later interrupt leaves that
// cordon in place, and an admin's uncordon drops the stale mark.
func TestNodeWrightRuntimeRequiredTaintAndCordonAfter(t *testing.T) {
	legacy := skyhookv1.Skyhooks.RuntimeRequiredTaint()
	createNodes(t, simnode.Node{Name: "rtnw-old", Labels: map[string]string{"pool": "rtnw"}, Taints: []corev1.Taint{legacy}})
	c := k8sClient(t)
	ctx := context.Background()
	nw := &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: "rtnw"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:    metav1.LabelSelector{MatchLabels: map[string]string{"pool": "rtnw"}},
			RuntimeRequired: true, AutoTaintNewNodes: true, RuntimeRequiredCordonAfter: true,
			Packages: skyhookv1.Packages{"tuning": pkg("1.0.0", "ghcr.io/x/tuning", nil)},
		}}
	if err := c.Create(ctx, nw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, nw) })
	waitNodeWright(t, "rtnw", time.Minute, func(nw *nodewrightv1.NodeWright) bool { return conditions.IsReady(nw) })
	eventually(t, "rtnw-old to lose the old key's taint and be cordoned after it", func() bool {
		n := getNode(t, "rtnw-old")
		return !taints.Has(n, legacy) && n.Spec.Unschedulable && n.Annotations["nodewright.nvidia.com/runtimeRequiredCordon"] == "true"
	})
	if _, ok := getNode(t, "rtnw-old").Annotations["nodewright.nvidia.com/autoTaint_nodewright.nvidia.com"]; ok {
		t.Error("a node gated by the old key was tainted again with the new one")
	}

	if err := env.CreateNodes(ctx, simnode.Node{Name: "rtnw-new", Labels: map[string]string{"pool": "rtnw"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Clientset.CoreV1().Nodes().Delete(context.Background(), "rtnw-new", metav1.DeleteOptions{})
	})
	eventually(t, "the new node to be gated by the NodeWright's key, done, and cordoned after", func() bool {
		n := getNode(t, "rtnw-new")
		return n.Annotations["nodewright.nvidia.com/autoTaint_nodewright.nvidia.com"] == "true" && !taints.HasAny(n, []corev1.Taint{legacy, skyhookv1.NodeWrights.RuntimeRequiredTaint()}) &&
			n.Labels["nodewright.nvidia.com/status_rtnw"] == "complete" && n.Spec.Unschedulable
	})

	// An interrupt on the cordoned node leaves the cordon as it found it.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"packages":{"tuning":{"version":"1.1.0","interrupt":{"type":"noop"}}}}}`))
	if err := c.Patch(ctx, nw, patch); err != nil {
		t.Fatal(err)
	}
	waitNodeWright(t, "rtnw", time.Minute, func(got *nodewrightv1.NodeWright) bool {
		return conditions.IsReady(got) && got.Status.ObservedGeneration == got.Generation
	})
	if n := getNode(t, "rtnw-new"); !n.Spec.Unschedulable || n.Annotations["nodewright.nvidia.com/runtimeRequiredCordon"] != "true" {
		t.Errorf("after an interrupt: cordoned %v, mark %q; want the runtime-required cordon kept", n.Spec.Unschedulable, n.Annotations["nodewright.nvidia.com/runtimeRequiredCordon"])
	}

	// kubectl uncordon leaves the mark; the operator drops it.
	uncordon := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"unschedulable":false}}`))
	if err := c.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "rtnw-new"}}, uncordon); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the stale runtimeRequiredCordon mark to go", func() bool {
		_, marked := getNode(t, "rtnw-new").Annotations["nodewright.nvidia.com/runtimeRequiredCordon"]
		return !marked
	})
}
