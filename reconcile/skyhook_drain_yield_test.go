package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
)

// drain.onTimeout Yield: a node held by a training job (a pod matching
// podNonInterruptLabels) gives its slot back, of the rollout's budget of 1
// and of a NodeDisruptionBudget of 1, once the drain timeout passes: the
// other nodes complete meanwhile, the node stays cordoned and waiting with
// since when on its record, and the rollout's WaitingForWorkloads condition
// says so. When the job says it may be interrupted now (its
// skyhook.nvidia.com/interruptible annotation), the node is tried again,
// the pod goes, and the node completes with one reboot.
func TestDrainYieldGivesTheSlotBackToALongRunningJob(t *testing.T) {
	const pool = "yield"
	createNodes(t, simnode.Numbered(pool, 3, map[string]string{"pool": pool})...)
	c := k8sClient(t)
	ctx := context.Background()
	training := barePod(t, "training-yield", pool+"-0")
	if err := c.Patch(ctx, training, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"training"}}}`))); err != nil {
		t.Fatal(err)
	}
	fleetBudget(t, pool, skyhookv1.NodeDisruptionBudgetSpec{
		NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}}, MaxUnavailable: intstr.FromInt32(1)})
	sk := drainSkyhook(pool, skyhookv1.DrainYield)
	sk.Spec.PodNonInterruptLabels = metav1.LabelSelector{MatchLabels: map[string]string{"app": "training"}}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })

	got := waitSkyhook(t, pool, 2*time.Minute, func(s *skyhookv1.Skyhook) bool {
		return s.Status.CompleteNodes == "2/3" && conditions.IsTrue(s, skyhookv1.WaitingForWorkloadsCondition)
	})
	if msg := conditions.GetMessage(got, skyhookv1.WaitingForWorkloadsCondition); !strings.HasPrefix(msg, "1 nodes gave their slot back to workloads") || !strings.Contains(msg, "waiting since 20") {
		t.Errorf("WaitingForWorkloads says %q; want the one node and since when", msg)
	}
	n := getNode(t, pool+"-0")
	rec := interrupt.Read(n, skyhookv1.Skyhooks.Named(pool))
	if !n.Spec.Unschedulable || n.Labels[skyhookv1.StatusKey(pool)] != "waiting" || rec == nil || rec.Phase != interrupt.PhaseYielded ||
		rec.WaitingSince.IsZero() || hosts.Reboots()[pool+"-0"] != 0 {
		t.Fatalf("the node that yielded: cordoned %v, status %q, record %+v, reboots %d; want cordoned, waiting, yielded with since when, not rebooted",
			n.Spec.Unschedulable, n.Labels[skyhookv1.StatusKey(pool)], rec, hosts.Reboots()[pool+"-0"])
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(training), training); err != nil || !training.DeletionTimestamp.IsZero() {
		t.Fatalf("the training pod was touched while it held the node: %v", err)
	}

	checkpointed := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"skyhook.nvidia.com/interruptible":"true"}}}`))
	if err := c.Patch(ctx, training, checkpointed); err != nil {
		t.Fatal(err)
	}
	done := waitSkyhook(t, pool, 2*time.Minute, isReady)
	if conditions.Has(done, skyhookv1.WaitingForWorkloadsCondition) {
		t.Errorf("WaitingForWorkloads stayed: %s", conditions.GetMessage(done, skyhookv1.WaitingForWorkloadsCondition))
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(training), training); !apierrors.IsNotFound(err) && training.DeletionTimestamp.IsZero() {
		t.Errorf("the pod that said it may be interrupted is still there: %v", err)
	}
	if reboots := hosts.Reboots(); reboots[pool+"-0"] != 1 || reboots[pool+"-1"] != 1 || reboots[pool+"-2"] != 1 {
		t.Errorf("reboots %v; want one on each node", reboots)
	}
	if n := getNode(t, pool+"-0"); n.Spec.Unschedulable {
		t.Error("the node that yielded is still cordoned after it completed")
	}
}
