package reconcile_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/taints"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// With --reapply-on-reboot (NodeWright's REAPPLY_ON_REBOOT) a node that
// reboots outside the rollout's own interrupts starts over: its record is
// reset, the runtime-required taint goes back on first (runtimeRequired
// with autoTaintNewNodes), every package runs again there and nowhere else,
// and a Normal Reboot event says why. The rollout's own reboot interrupt,
// before and after, is no such reboot: it does not start the node over.
// For both kinds: the boot key, the taint and the event's object are the
// kind's.
func TestReapplyOnRebootStartsARebootedNodeOver(t *testing.T) {
	restartOperator(t, func(o *operator.Options) { o.ReapplyOnReboot = true })
	eachKind(t, testReapplyOnReboot)
}

func testReapplyOnReboot(t *testing.T, k kindCase) {
	name, node0, node1 := k.name("reapply"), k.name("reapply-0"), k.name("reapply-1")
	taint := k.RuntimeRequiredTaint()
	createNodes(t, simnode.Numbered(name, 2, map[string]string{"pool": name})...)
	ctx := context.Background()
	created := countStagePodsOf(t, k.ref("reapply"))
	rebootsBefore := hosts.Reboots()
	reboots := func(node string) int { return hosts.Reboots()[node] - rebootsBefore[node] }
	k.create(t, "reapply", skyhookv1.SkyhookSpec{
		NodeSelector:    metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}},
		RuntimeRequired: true, AutoTaintNewNodes: true,
		Packages: skyhookv1.Packages{
			"tuning": pkg("1.0.0", "ghcr.io/x/tuning", nil),
			"driver": withInterrupt(pkg("1.0.0", "ghcr.io/x/driver", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}),
		},
	})
	k.wait(t, "reapply", 2*time.Minute, isReady)
	if got := created(); got[node0+"/apply"] != 2 || got[node0+"/interrupt"] != 1 || reboots(node0) != 1 {
		t.Fatalf("first rollout: stage pods %v, reboots %v; want the two packages applied once and one reboot per node", got, hosts.Reboots())
	}
	eventually(t, "the runtime-required taint off the complete node", func() bool {
		return !taints.Has(getNode(t, node0), taint)
	})
	acked := getNode(t, node0)
	if boot := acked.Status.NodeInfo.BootID; acked.Annotations[k.ref("reapply").BootIDAnnotation()] != boot {
		t.Fatalf("the boot after the rollout's own reboot (%s) is not acknowledged under %s: %v", boot, k.ref("reapply").BootIDAnnotation(), acked.Annotations)
	}

	// A reboot nobody asked for: node0 loses what the packages did.
	if err := env.Reboot(ctx, node0, name+"-unplanned", time.Second); err != nil {
		t.Fatal(err)
	}
	testenv.WaitEvent(t, env, testenv.Event{Type: corev1.EventTypeNormal, Regarding: name, Reason: "Reboot",
		Note: "detected reboot, resetting node [" + node0 + "] to be reapplied"})
	testenv.WaitEvent(t, env, testenv.Event{Type: corev1.EventTypeNormal, Regarding: node0, Reason: "Reboot",
		Note: "detected reboot, resetting node for [" + name + "] to be reapplied"})
	eventually(t, "the runtime-required taint back on "+node0, func() bool {
		return taints.Has(getNode(t, node0), taint)
	})
	eventually(t, "the packages applied again on "+node0, func() bool { return created()[node0+"/apply"] == 4 })
	k.wait(t, "reapply", 2*time.Minute, func(s *skyhookv1.Skyhook) bool {
		return isReady(s) && !taints.Has(getNode(t, node0), taint)
	})
	// The driver's own reboot, in the re-run, started nothing over again.
	time.Sleep(2 * time.Second)
	got := created()
	if got[node0+"/apply"] != 4 || got[node0+"/interrupt"] != 2 || reboots(node0) != 2 {
		t.Errorf("after the reboot: stage pods %v, reboots %v; want the packages applied twice and one more reboot on %s", got, hosts.Reboots(), node0)
	}
	if got[node1+"/apply"] != 2 || got[node1+"/interrupt"] != 1 {
		t.Errorf("%s did not reboot, yet its stages ran again: %v", node1, got)
	}
}
