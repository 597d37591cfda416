package chaos

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// The fleet budget's caps, and the nodes it and the three rollouts select
// (chaos-20 to chaos-31, six in each zone; the other test's admin cordons
// are on chaos-1 and chaos-2).
const (
	fleetLabel           = "fleet-chaos"
	fleetMax, fleetZone  = 3, 2
	fleetFirst, fleetLen = 20, 12
)

// TestFleetBudgetHoldsAcrossLeaderChanges: two Skyhooks and a NodeWright,
// each with a budget of 5, start together on the same twelve nodes under a
// NodeDisruptionBudget of 3, at most 2 per zone, while operator replicas
// and the leader are killed. A watcher of the nodes never sees more than 3
// of them cordoned, nor more than 2 in a zone; every rollout completes.
func TestFleetBudgetHoldsAcrossLeaderChanges(t *testing.T) {
	s := seed(t)
	r := rand.New(rand.NewSource(s))
	t.Logf("seed %d (SKYHOOK_CHAOS_SEED=%d replays the kills)", s, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testenv.Client(t, env)
	ops, err := startOperators(env, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ops.stop()
	env.SimulateHosts(ctx, time.Second)
	labelFleet(t)
	cordons, err := testenv.WatchCordons(ctx, env, fleetLabel+"=yes", "zone")
	if err != nil {
		t.Fatal(err)
	}

	runtime := &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: "fc-runtime"}, Spec: fleetSpec("runtime", skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot})}
	if err := waitAdmitting(ctx, c, runtime); err != nil {
		t.Fatal(err)
	}
	one := func(o client.Object) {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), o) })
	}
	perZone := intstr.FromInt32(fleetZone)
	one(&skyhookv1.NodeDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: fleetLabel}, Spec: skyhookv1.NodeDisruptionBudgetSpec{
		NodeSelector:   metav1.LabelSelector{MatchLabels: map[string]string{fleetLabel: "yes"}},
		MaxUnavailable: intstr.FromInt32(fleetMax),
		Topology:       &skyhookv1.DisruptionTopology{Key: "zone", MaxUnavailablePerDomain: &perZone},
	}})
	one(&skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "fc-kernel"}, Spec: fleetSpec("kernel", skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot})})
	one(&skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "fc-driver"},
		Spec: fleetSpec("driver", skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: []string{"nvidia-persistenced"}})})
	one(runtime)

	kills := 0
	deadline := time.Now().Add(6 * time.Minute)
	for !fleetDone(ctx, c) {
		if time.Now().After(deadline) {
			t.Fatalf("the three rollouts did not complete within 6 minutes (%d kills)", kills)
		}
		time.Sleep(time.Duration(2000+r.Intn(3000)) * time.Millisecond)
		if kills < 4 {
			victim := r.Intn(2)
			if kills%2 == 1 {
				if l := ops.leader(); l >= 0 {
					victim = l
				}
			}
			if err := ops.kill(env, victim, time.Second); err != nil {
				t.Fatal(err)
			}
			kills++
			t.Logf("killed replica %d (kill %d)", victim, kills)
		}
	}
	overall, zone := cordons.Peaks()
	t.Logf("at most %d of the %d nodes cordoned at once, %d in one zone, across %d kills", overall, fleetLen, zone, kills)
	if overall > fleetMax || zone > fleetZone {
		t.Errorf("at most %d nodes cordoned at once, %d in one zone; the NodeDisruptionBudget allows %d, %d per zone", overall, zone, fleetMax, fleetZone)
	}
	if overall == 0 {
		t.Error("no node was ever seen cordoned: the watcher saw nothing")
	}
}

// fleetSpec is a rollout on the fleet's nodes with a budget of 5, larger
// than the fleet's.
func fleetSpec(pkg string, in skyhookv1.Interrupt) skyhookv1.SkyhookSpec {
	five := 5
	return skyhookv1.SkyhookSpec{
		NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{fleetLabel: "yes"}},
		InterruptionBudget: skyhookv1.InterruptionBudget{Count: &five},
		Packages: skyhookv1.Packages{pkg: {PackageRef: skyhookv1.PackageRef{Version: "1.0.0"}, Image: "ghcr.io/x/" + pkg, Interrupt: &in,
			Env: []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "300ms"}}}},
	}
}

// labelFleet puts the fleet label on the budget's nodes.
func labelFleet(t *testing.T) {
	t.Helper()
	for i := fleetFirst; i < fleetFirst+fleetLen; i++ {
		if _, err := env.Clientset.CoreV1().Nodes().Patch(context.Background(), fmt.Sprintf("chaos-%d", i), "application/merge-patch+json",
			[]byte(`{"metadata":{"labels":{"`+fleetLabel+`":"yes"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// fleetDone reports whether the three rollouts are complete and Ready.
func fleetDone(ctx context.Context, c client.Client) bool {
	for _, name := range []string{"fc-kernel", "fc-driver"} {
		sk := &skyhookv1.Skyhook{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, sk); err != nil || sk.Status.Status != skyhookv1.StatusComplete || !conditions.IsReady(sk) {
			return false
		}
	}
	nw := &nodewrightv1.NodeWright{}
	return c.Get(ctx, client.ObjectKey{Name: "fc-runtime"}, nw) == nil && nw.Status.Status == skyhookv1.StatusComplete && conditions.IsReady(nw)
}
