package reconcile_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// NodeWright's batch numbering (its deployment-policy/batch-state-reset
// scenario): with resetBatchStateOnCompletion (the policy's default here) a
// complete rollout reads currentBatch 1 again; a Skyhook that overrides it
// with false keeps the batch it ended in, until the reset-batch-state
// annotation (the CLI's reset and deployment-policy reset) starts it over
// and is removed, the node order cleared with it.
func TestBatchStateResetsOnCompletionAndOnRequest(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	var nodes []simnode.Node
	for _, pool := range []string{"reset-auto", "reset-kept"} {
		nodes = append(nodes, simnode.Numbered(pool, 4, map[string]string{"pool": pool, "tier": "1"})...)
	}
	createNodes(t, nodes...)
	createPolicyYAML(t, `
metadata: {name: batch-reset}
spec:
  resetBatchStateOnCompletion: true
  default:
    budget: {count: 2}
    strategy: {exponential: {initialBatch: 1, growthFactor: 2}}
  compartments:
  - name: tier1
    selector: {matchLabels: {tier: "1"}}
    budget: {count: 2}
    strategy: {exponential: {initialBatch: 1, growthFactor: 2}}
`)
	skyhookOn := func(pool string, reset *bool) *skyhookv1.Skyhook {
		sk := &skyhookv1.Skyhook{
			ObjectMeta: metav1.ObjectMeta{Name: pool},
			Spec: skyhookv1.SkyhookSpec{
				DeploymentPolicy:        "batch-reset",
				DeploymentPolicyOptions: skyhookv1.DeploymentPolicyOptions{ResetBatchStateOnCompletion: reset},
				NodeSelector:            metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}},
				Packages: skyhookv1.Packages{"quick-package": {
					PackageRef: skyhookv1.PackageRef{Version: "3.21.0"},
					Image:      "ghcr.io/nvidia/skyhook/agentless",
				}},
			},
		}
		if err := c.Create(ctx, sk); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(ctx, sk) })
		return sk
	}
	skyhookOn("reset-auto", nil)
	kept := skyhookOn("reset-kept", ptr.To(false))

	tier1 := func(sk *skyhookv1.Skyhook) skyhookv1.CompartmentProgress {
		return sk.Status.CompartmentStatuses["tier1"]
	}
	auto := waitSkyhook(t, "reset-auto", 2*time.Minute, isReady)
	if got := tier1(auto); got.ProgressPercent != 100 || got.BatchState == nil || got.BatchState.CurrentBatch != 1 {
		t.Errorf("reset on completion: tier1 %+v; want progressPercent 100 and currentBatch 1", got)
	}
	done := waitSkyhook(t, "reset-kept", 2*time.Minute, isReady)
	if got := tier1(done); got.ProgressPercent != 100 || got.BatchState == nil || got.BatchState.CurrentBatch <= 1 {
		t.Fatalf("resetBatchStateOnCompletion false: tier1 %+v; want the batch it ended in (> 1)", got)
	}

	if err := c.Get(ctx, client.ObjectKeyFromObject(kept), kept); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(kept.DeepCopy())
	kept.Annotations = map[string]string{skyhookv1.ResetBatchStateAnnotation: time.Now().UTC().Format(time.RFC3339)}
	if err := c.Patch(ctx, kept, patch); err != nil {
		t.Fatal(err)
	}
	reset := waitSkyhook(t, "reset-kept", time.Minute, func(sk *skyhookv1.Skyhook) bool {
		_, asked := sk.Annotations[skyhookv1.ResetBatchStateAnnotation]
		return !asked && tier1(sk).BatchState != nil && tier1(sk).BatchState.CurrentBatch == 1
	})
	if reset.Status.NodeOrderOffset != 0 || len(reset.Status.NodePriority) != 0 || tier1(reset).ProgressPercent != 100 {
		t.Errorf("after the reset: nodeOrderOffset %d, nodePriority %v, tier1 %+v; want 0, none, still 100%%",
			reset.Status.NodeOrderOffset, reset.Status.NodePriority, tier1(reset))
	}
	// As stored: NodeWright's suite asserts nodeOrderOffset: 0 after a
	// reset, which an omitted zero does not satisfy.
	raw := &unstructured.Unstructured{}
	raw.SetGroupVersionKind(skyhookv1.GroupVersion.WithKind("Skyhook"))
	if err := c.Get(ctx, client.ObjectKeyFromObject(kept), raw); err != nil {
		t.Fatal(err)
	}
	if offset, found, _ := unstructured.NestedInt64(raw.Object, "status", "nodeOrderOffset"); !found || offset != 0 {
		t.Errorf("status.nodeOrderOffset as stored: %d, present %v; want 0, present", offset, found)
	}
}
