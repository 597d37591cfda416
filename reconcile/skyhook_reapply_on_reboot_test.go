package reconcile_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/reconcile/taints"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// With --reapply-on-reboot (NodeWright's REAPPLY_ON_REBOOT) a node that
// reboots outside the rollout's own interrupts starts over: its record is
// reset, the runtime-required taint goes back on first (runtimeRequired
// with autoTaintNewNodes), every package runs again there and nowhere else,
// and a Normal Reboot event says why. The rollout's own reboot interrupt,
// before and after, is no such reboot: it does not start the node over.
func TestReapplyOnRebootStartsARebootedNodeOver(t *testing.T) {
	restartOperator(t, func(o *operator.Options) { o.ReapplyOnReboot = true })
	createNodes(t, cluster.NumberedNodes("reapply", 2, map[string]string{"pool": "reapply"})...)
	c := k8sClient(t)
	ctx := context.Background()
	created := countStagePods(t, "reapply")
	rebootsBefore := hosts.Reboots()
	reboots := func(node string) int { return hosts.Reboots()[node] - rebootsBefore[node] }
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "reapply"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:    metav1.LabelSelector{MatchLabels: map[string]string{"pool": "reapply"}},
			RuntimeRequired: true, AutoTaintNewNodes: true,
			Packages: skyhookv1.Packages{
				"tuning": pkg("1.0.0", "ghcr.io/x/tuning", nil),
				"driver": withInterrupt(pkg("1.0.0", "ghcr.io/x/driver", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}),
			},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "reapply", 2*time.Minute, isReady)
	if got := created(); got["reapply-0/apply"] != 2 || got["reapply-0/interrupt"] != 1 || reboots("reapply-0") != 1 {
		t.Fatalf("first rollout: stage pods %v, reboots %v; want the two packages applied once and one reboot per node", got, hosts.Reboots())
	}
	eventually(t, "the runtime-required taint off the complete node", func() bool {
		return !taints.Has(getNode(t, "reapply-0"), stagepod.DefaultRuntimeRequiredTaint)
	})
	acked := getNode(t, "reapply-0")
	if boot := acked.Status.NodeInfo.BootID; acked.Annotations[skyhookv1.Skyhooks.Named("reapply").BootIDAnnotation()] != boot {
		t.Fatalf("the boot after the rollout's own reboot (%s) is not acknowledged: %v", boot, acked.Annotations)
	}

	// A reboot nobody asked for: reapply-0 loses what the packages did.
	if err := env.Reboot(ctx, "reapply-0", "reapply-unplanned", time.Second); err != nil {
		t.Fatal(err)
	}
	testenv.WaitEvent(t, env, testenv.Event{Type: corev1.EventTypeNormal, Regarding: "reapply", Reason: "Reboot",
		Note: "detected reboot, resetting node [reapply-0] to be reapplied"})
	testenv.WaitEvent(t, env, testenv.Event{Type: corev1.EventTypeNormal, Regarding: "reapply-0", Reason: "Reboot",
		Note: "detected reboot, resetting node for [reapply] to be reapplied"})
	eventually(t, "the runtime-required taint back on reapply-0", func() bool {
		return taints.Has(getNode(t, "reapply-0"), stagepod.DefaultRuntimeRequiredTaint)
	})
	eventually(t, "the packages applied again on reapply-0", func() bool { return created()["reapply-0/apply"] == 4 })
	waitSkyhook(t, "reapply", 2*time.Minute, func(s *skyhookv1.Skyhook) bool {
		return isReady(s) && !taints.Has(getNode(t, "reapply-0"), stagepod.DefaultRuntimeRequiredTaint)
	})
	// The driver's own reboot, in the re-run, started nothing over again.
	time.Sleep(2 * time.Second)
	got := created()
	if got["reapply-0/apply"] != 4 || got["reapply-0/interrupt"] != 2 || reboots("reapply-0") != 2 {
		t.Errorf("after the reboot: stage pods %v, reboots %v; want the packages applied twice and one more reboot on reapply-0", got, hosts.Reboots())
	}
	if got["reapply-1/apply"] != 2 || got["reapply-1/interrupt"] != 1 {
		t.Errorf("reapply-1 did not reboot, yet its stages ran again: %v", got)
	}
}
