package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// watchCordons follows the pool's nodes: the most cordoned at once,
// overall and in one domain.
func watchCordons(t *testing.T, pool, domainKey string) *testenv.CordonWatcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := testenv.WatchCordons(ctx, env, "pool="+pool, domainKey)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// fleetBudget makes a NodeDisruptionBudget, deleted when the test ends.
func fleetBudget(t *testing.T, name string, spec skyhookv1.NodeDisruptionBudgetSpec) {
	t.Helper()
	c := k8sClient(t)
	b := &skyhookv1.NodeDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if err := c.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), b) })
}

// Three rollouts start together on the same six nodes, two Skyhooks and a
// NodeWright, each with a budget of its own larger than the fleet's: a
// NodeDisruptionBudget of 2, at most 1 per zone. A watcher of the nodes
// never sees more than 2 cordoned at once, nor 2 in one zone, and sees the
// cap used (2 at once); every rollout completes. A rollout held by the
// budget said so in its FleetBudgetHeld condition and an event naming the
// budget and the domain.
func TestFleetBudgetCapsRolloutsThatShareNodes(t *testing.T) {
	const pool, zone = "fleetb", "fleetb-zone"
	var nodes []simnode.Node
	for i, n := range simnode.Numbered(pool, 6, map[string]string{"pool": pool}) {
		n.Labels = map[string]string{"pool": pool, zone: fmt.Sprintf("z%d", i/3)}
		nodes = append(nodes, n)
	}
	createNodes(t, nodes...)
	cordons := watchCordons(t, pool, zone)
	held := watchCondition(t, skyhookv1.FleetBudgetHeldCondition)
	one := intstr.FromInt32(1)
	fleetBudget(t, pool, skyhookv1.NodeDisruptionBudgetSpec{
		NodeSelector:   metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}},
		MaxUnavailable: intstr.FromInt32(2),
		Topology:       &skyhookv1.DisruptionTopology{Key: zone, MaxUnavailablePerDomain: &one},
	})

	c := k8sClient(t)
	ctx := context.Background()
	three := 3
	spec := func(image string, in skyhookv1.Interrupt) skyhookv1.SkyhookSpec {
		return skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &three},
			Packages:           skyhookv1.Packages{"pkg": withInterrupt(pkg("1.0.0", image, nil), in)},
		}
	}
	reboot := skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}
	objects := []client.Object{
		&skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: pool + "-driver"}, Spec: spec("ghcr.io/x/driver", reboot)},
		&skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: pool + "-kernel"}, Spec: spec("ghcr.io/x/kernel", reboot)},
		&nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: pool + "-runtime"},
			Spec: spec("ghcr.io/x/runtime", skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: []string{"containerd"}})},
	}
	for _, o := range objects {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(ctx, o) })
	}
	waitSkyhook(t, pool+"-driver", 3*time.Minute, isReady)
	waitSkyhook(t, pool+"-kernel", 3*time.Minute, isReady)
	waitNodeWright(t, pool+"-runtime", 3*time.Minute, func(nw *nodewrightv1.NodeWright) bool {
		return conditions.IsTrue(nw, meta.ReadyCondition) && nw.Status.ObservedGeneration == nw.Generation
	})

	overall, inDomain := cordons.Peaks()
	if overall > 2 || inDomain > 1 {
		t.Errorf("at most %d nodes cordoned at once, %d in one zone; the fleet budget allows 2, 1 per zone", overall, inDomain)
	}
	if overall < 2 {
		t.Errorf("at most %d nodes cordoned at once: the fleet budget's 2 slots were not used", overall)
	}
	messages := held()
	if len(messages) == 0 {
		t.Fatal("no rollout said it was held by the NodeDisruptionBudget")
	}
	want := "held by NodeDisruptionBudget " + pool
	found := false
	for _, m := range messages {
		found = found || strings.Contains(m, want)
	}
	if !found {
		t.Errorf("FleetBudgetHeld said %q; want one that names the budget (%q)", messages, want)
	}
	testenv.WaitEvent(t, env, testenv.Event{Type: corev1.EventTypeNormal, Regarding: pool + "-kernel", Reason: "FleetBudgetHeld", Note: "NodeDisruptionBudget " + pool})

	// The budget's status counts the nodes: 6 selected, 2 allowed, none
	// out of service once every rollout is done.
	var b skyhookv1.NodeDisruptionBudget
	eventually(t, "the budget's status to count the nodes", func() bool {
		if err := c.Get(ctx, client.ObjectKey{Name: pool}, &b); err != nil {
			return false
		}
		s := b.Status
		return s.Selected == 6 && s.Allowed == 2 && s.Disrupted == 0 && len(s.Rollouts) == 0 && s.ObservedGeneration == b.Generation
	})
	if ready := apimeta.FindStatusCondition(b.Status.Conditions, "Ready"); ready == nil || ready.Status != metav1.ConditionTrue ||
		ready.Message != "0 of 6 selected nodes out of service, 2 allowed" {
		t.Errorf("the budget's Ready condition: %+v", ready)
	}
	if active := apimeta.FindStatusCondition(b.Status.Conditions, "Active"); active == nil || active.Status != metav1.ConditionTrue {
		t.Errorf("the budget, which has no windows, is not Active: %+v", active)
	}
}

// watchCondition keeps the messages of a condition of the given type that
// any Skyhook showed True, from now until the test ends.
func watchCondition(t *testing.T, conditionType string) func() []string {
	t.Helper()
	w, err := testenv.Client(t, env).Watch(context.Background(), &skyhookv1.SkyhookList{})
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Collect(t, w, func(ev watch.Event) []string {
		sk, ok := ev.Object.(*skyhookv1.Skyhook)
		if !ok {
			return nil
		}
		if c := conditions.Get(sk, conditionType); c != nil && c.Status == metav1.ConditionTrue {
			return []string{c.Message}
		}
		return nil
	})
}

// Two budgets select the same nodes, one of them only inside its window:
// while the window is closed the other (1 at a time) is the cap; once the
// window is open its 0 holds every node, the rollout says which budget
// holds it, and deleting that budget lets the rollout finish.
func TestFleetBudgetAppliesInItsWindowAndTheMostRestrictiveWins(t *testing.T) {
	const pool = "fleetw"
	createNodes(t, simnode.Numbered(pool, 3, map[string]string{"pool": pool})...)
	cordons := watchCordons(t, pool, "")
	selector := metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}}
	fleetBudget(t, pool+"-one", skyhookv1.NodeDisruptionBudgetSpec{NodeSelector: selector, MaxUnavailable: intstr.FromInt32(1)})
	closed := fmt.Sprintf("0 %d * * *", (time.Now().UTC().Hour()+6)%24) // a window six hours away
	fleetBudget(t, pool+"-freeze", skyhookv1.NodeDisruptionBudgetSpec{NodeSelector: selector, MaxUnavailable: intstr.FromInt32(0),
		Windows: []skyhookv1.DisruptionWindow{{Schedule: closed, Duration: metav1.Duration{Duration: time.Hour}}}})

	c := k8sClient(t)
	ctx := context.Background()
	three := 3
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: pool}, Spec: skyhookv1.SkyhookSpec{
		NodeSelector:       selector,
		InterruptionBudget: skyhookv1.InterruptionBudget{Count: &three},
		Packages:           skyhookv1.Packages{"pkg": withInterrupt(pkg("1.0.0", "ghcr.io/x/pkg", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot})},
	}}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, pool, 2*time.Minute, isReady)
	if most, _ := cordons.Peaks(); most != 1 {
		t.Errorf("outside the freeze's window: at most %d nodes cordoned at once, want the other budget's 1", most)
	}
	var freeze skyhookv1.NodeDisruptionBudget
	eventually(t, "the freeze to say it is not active", func() bool {
		err := c.Get(ctx, client.ObjectKey{Name: pool + "-freeze"}, &freeze)
		active := apimeta.FindStatusCondition(freeze.Status.Conditions, "Active")
		return err == nil && active != nil && active.Status == metav1.ConditionFalse && freeze.Status.Allowed == 3
	})

	freeze.Spec.Windows[0].Schedule = "* * * * *" // open from every minute, for an hour: open now
	if err := c.Update(ctx, &freeze); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the freeze to be active", func() bool {
		err := c.Get(ctx, client.ObjectKey{Name: pool + "-freeze"}, &freeze)
		active := apimeta.FindStatusCondition(freeze.Status.Conditions, "Active")
		return err == nil && active != nil && active.Status == metav1.ConditionTrue && freeze.Status.Allowed == 0
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
		t.Fatal(err)
	}
	sk.Spec.Packages["pkg"] = withInterrupt(pkg("1.1.0", "ghcr.io/x/pkg", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot})
	if err := c.Update(ctx, sk); err != nil {
		t.Fatal(err)
	}
	// The nodes turn from complete to waiting pass by pass: the condition
	// counts them as they come.
	held := waitSkyhook(t, pool, time.Minute, func(s *skyhookv1.Skyhook) bool {
		return strings.HasPrefix(conditions.GetMessage(s, skyhookv1.FleetBudgetHeldCondition), "3 nodes wait")
	})
	if msg := conditions.GetMessage(held, skyhookv1.FleetBudgetHeldCondition); !strings.Contains(msg, "3 nodes wait: held by NodeDisruptionBudget "+pool+"-freeze: 0 of 0 taken") {
		t.Errorf("FleetBudgetHeld says %q; want the 3 nodes held by the freeze", msg)
	}
	if held.Status.NodesInProgress != 0 {
		t.Errorf("%d nodes in progress under a budget of 0", held.Status.NodesInProgress)
	}
	if err := c.Delete(ctx, &freeze); err != nil {
		t.Fatal(err)
	}
	done := waitSkyhook(t, pool, 2*time.Minute, func(s *skyhookv1.Skyhook) bool { return isReady(s) && s.Status.PackageList == "pkg:1.1.0" })
	if conditions.Has(done, skyhookv1.FleetBudgetHeldCondition) {
		t.Errorf("FleetBudgetHeld stayed after the rollout completed: %s", conditions.GetMessage(done, skyhookv1.FleetBudgetHeldCondition))
	}
}
