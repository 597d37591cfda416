package reconcile_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

func withInterrupt(p skyhookv1.Package, in skyhookv1.Interrupt) skyhookv1.Package {
	p.Interrupt = &in
	return p
}

// nodeEvents follows the nodes of a pool: when each first showed a status
// for the Skyhook, when it came back Ready with a new boot ID, and whether
// it was ever seen complete while still cordoned by the Skyhook.
type nodeEvents struct {
	mu                 sync.Mutex
	firstInProgress    map[string]time.Time
	rebootedAt         map[string]time.Time
	bootIDs            map[string]string
	cordonedOnComplete []string
}

func watchNodes(t *testing.T, pool, skyhook string) *nodeEvents {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := env.Clientset.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: "pool=" + pool})
	if err != nil {
		t.Fatal(err)
	}
	e := &nodeEvents{firstInProgress: map[string]time.Time{}, rebootedAt: map[string]time.Time{}, bootIDs: map[string]string{}}
	go func() {
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok {
				continue
			}
			e.mu.Lock()
			now := time.Now()
			status := n.Labels[skyhookv1.StatusKey(skyhook)]
			if _, seen := e.firstInProgress[n.Name]; !seen && status == string(skyhookv1.StatusInProgress) {
				e.firstInProgress[n.Name] = now
			}
			boot := n.Status.NodeInfo.BootID
			if first, ok := e.bootIDs[n.Name]; !ok {
				e.bootIDs[n.Name] = boot
			} else if boot != first && isNodeReady(n) {
				if _, done := e.rebootedAt[n.Name]; !done {
					e.rebootedAt[n.Name] = now
				}
			}
			if status == string(skyhookv1.StatusComplete) && n.Spec.Unschedulable && strings.HasPrefix(n.Annotations[cordon.Annotation], skyhook+"/") {
				e.cordonedOnComplete = append(e.cordonedOnComplete, n.Name)
			}
			e.mu.Unlock()
		}
	}()
	return e
}

func isNodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func getNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n, err := env.Clientset.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Three packages that each ask for an interrupt get one merged reboot per
// node; the reboot counts only once the node is back Ready with a new boot
// ID, and with a budget of one the second node starts only after that; the
// post-interrupt stages follow and the cordon goes.
func TestMergedRebootIsVerifiedBeforeTheNextWave(t *testing.T) {
	createNodes(t, simnode.Numbered("reboot", 2, map[string]string{"pool": "reboot"})...)
	c := k8sClient(t)
	ctx := context.Background()
	events := watchNodes(t, "reboot", "reboot")
	created := countStagePods(t, "reboot")
	one := 1
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "reboot"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": "reboot"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &one},
			Packages: skyhookv1.Packages{
				"driver":  withInterrupt(pkg("1.0.0", "ghcr.io/x/driver", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}),
				"runtime": withInterrupt(pkg("1.0.0", "ghcr.io/x/runtime", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: []string{"containerd"}}),
				"monitor": withInterrupt(pkg("1.0.0", "ghcr.io/x/monitor", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: []string{"dcgm"}}),
			},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "reboot", 2*time.Minute, isReady)

	runs := created()
	reboots := hosts.Reboots()
	for _, node := range []string{"reboot-0", "reboot-1"} {
		if runs[node+"/interrupt"] != 1 || reboots[node] != 1 {
			t.Errorf("%s: %d interrupt pods and %d reboots, want one merged interrupt and one reboot (pods %v)", node, runs[node+"/interrupt"], reboots[node], runs)
		}
		if runs[node+"/post-interrupt"] != 3 {
			t.Errorf("%s: %d post-interrupt pods, want one per package", node, runs[node+"/post-interrupt"])
		}
		n := getNode(t, node)
		if n.Spec.Unschedulable || n.Annotations[cordon.Annotation] != "" {
			t.Errorf("%s left cordoned (%q)", node, n.Annotations[cordon.Annotation])
		}
		if !strings.Contains(n.Annotations[skyhookv1.NodeStateAnnotation("reboot")], `"name":"driver","version":"1.0.0","image":"ghcr.io/x/driver","stage":"post-interrupt","state":"complete"`) {
			t.Errorf("%s record %s", node, n.Annotations[skyhookv1.NodeStateAnnotation("reboot")])
		}
	}
	events.mu.Lock()
	defer events.mu.Unlock()
	first, second := events.rebootedAt["reboot-0"], events.firstInProgress["reboot-1"]
	if first.IsZero() || second.IsZero() || second.Before(first) {
		t.Errorf("reboot-0 back with a new boot ID at %v, reboot-1 started at %v: the second wave did not wait for the reboot", first, second)
	}
	if len(events.cordonedOnComplete) > 0 {
		t.Errorf("nodes seen complete while still cordoned: %v", events.cordonedOnComplete)
	}
}

// A pod matching podNonInterruptLabels holds the interrupt, with the node
// cordoned, until it ends: NodeWright v0.20's Blocked condition
// (NonInterruptPodsRunning) names the node and a Warning event on the node
// names the pod; it is no drain blocker.
func TestNonInterruptPodHoldsTheInterrupt(t *testing.T) {
	createNodes(t, simnode.Numbered("hold", 1, map[string]string{"pool": "hold"})...)
	c := k8sClient(t)
	ctx := context.Background()
	training := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "training", Namespace: "default", Labels: map[string]string{"app": "training"}},
		Spec:       corev1.PodSpec{NodeName: "hold-0", Containers: []corev1.Container{{Name: "main", Image: "ghcr.io/x/train:1"}}},
	}
	if err := c.Create(ctx, training); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), training) })
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "hold"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:          metav1.LabelSelector{MatchLabels: map[string]string{"pool": "hold"}},
			PodNonInterruptLabels: metav1.LabelSelector{MatchLabels: map[string]string{"app": "training"}},
			Packages: skyhookv1.Packages{"tuning": withInterrupt(pkg("1.0.0", "ghcr.io/x/tuning", nil),
				skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: []string{"kubelet"}})},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	got := waitSkyhook(t, "hold", time.Minute, func(s *skyhookv1.Skyhook) bool {
		return conditions.GetReason(s, skyhookv1.BlockedCondition) == "NonInterruptPodsRunning"
	})
	if msg := conditions.GetMessage(got, skyhookv1.BlockedCondition); msg != "1 node(s) blocked by non-interrupt pods (hold-0). Waiting." {
		t.Errorf("Blocked says %q", msg)
	}
	if conditions.Has(got, skyhookv1.DrainBlockedCondition) {
		t.Errorf("DrainBlocked for a non-interrupt pod: %+v", got.Status.Conditions)
	}
	waitWarning(t, "hold-0", "Drain", "default/training")
	if n := getNode(t, "hold-0"); !n.Spec.Unschedulable {
		t.Error("the node waits for the pod without being cordoned")
	}
	time.Sleep(3 * time.Second) // the interrupt must still be held
	if err := c.Get(ctx, client.ObjectKeyFromObject(training), training); err != nil {
		t.Fatalf("the non-interrupt pod was touched: %v", err)
	}
	if isReady(waitSkyhook(t, "hold", time.Second, func(*skyhookv1.Skyhook) bool { return true })) {
		t.Fatal("Ready while the interrupt is held")
	}

	if err := c.Delete(ctx, training); err != nil {
		t.Fatal(err)
	}
	got = waitSkyhook(t, "hold", time.Minute, isReady)
	if conditions.Has(got, skyhookv1.DrainBlockedCondition) || conditions.Has(got, skyhookv1.BlockedCondition) {
		t.Errorf("DrainBlocked or Blocked stayed: %+v", got.Status.Conditions)
	}
	if n := getNode(t, "hold-0"); n.Spec.Unschedulable {
		t.Error("the node stayed cordoned")
	}
}

// A pod covered by a PodDisruptionBudget that allows no disruption blocks
// the drain; DrainBlocked names it and the budget; once the budget goes the
// pod is evicted and the interrupt runs.
func TestPodDisruptionBudgetBlocksTheDrain(t *testing.T) {
	createNodes(t, simnode.Numbered("pdb", 1, map[string]string{"pool": "pdb"})...)
	c := k8sClient(t)
	ctx := context.Background()
	// An owner that exists, so the pod counts as managed (eviction, not
	// --force) and the garbage collector leaves it alone.
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-owner", Namespace: "default"}}
	if err := c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), owner) })
	yes := true
	web := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &yes}}},
		Spec: corev1.PodSpec{NodeName: "pdb-0", Containers: []corev1.Container{{Name: "main", Image: "ghcr.io/x/web:1"}}},
	}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), web) })
	minOne := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minOne, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	if err := c.Create(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pdb) })
	eventually(t, "the controller-manager to compute the budget", func() bool {
		return c.Get(ctx, client.ObjectKeyFromObject(pdb), pdb) == nil && pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy == 1
	})

	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "pdb"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "pdb"}},
			Packages:     skyhookv1.Packages{"tuning": withInterrupt(pkg("1.0.0", "ghcr.io/x/tuning", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptNoop})},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	got := waitSkyhook(t, "pdb", time.Minute, func(s *skyhookv1.Skyhook) bool {
		return strings.Contains(conditions.GetMessage(s, skyhookv1.DrainBlockedCondition), "default/web")
	})
	// NodeWright v0.20's words: the nodes, then each refused pod with the
	// API server's reason verbatim.
	if reason, msg := conditions.GetReason(got, skyhookv1.DrainBlockedCondition), conditions.GetMessage(got, skyhookv1.DrainBlockedCondition); reason != "PodDisruptionBudget" ||
		!strings.HasPrefix(msg, "1/1 nodes blocked draining (pdb-0); default/web on pdb-0: ") || !strings.Contains(msg, "needs 1 healthy pods") {
		t.Errorf("DrainBlocked %s: %q", reason, msg)
	}
	n := getNode(t, "pdb-0")
	if _, err := time.Parse(time.RFC3339Nano, n.Annotations["skyhook.nvidia.com/drainStart_pdb"]); err != nil ||
		!strings.HasPrefix(n.Annotations["skyhook.nvidia.com/drainBlocked_pdb"], `[{"namespace":"default","name":"web","reason":"PodDisruptionBudget","detail":"`) {
		t.Errorf("drain marks on the node: drainStart %q (%v), drainBlocked %q", n.Annotations["skyhook.nvidia.com/drainStart_pdb"], err,
			n.Annotations["skyhook.nvidia.com/drainBlocked_pdb"])
	}
	waitWarning(t, "pdb", "DrainBlocked", "default/web")

	if err := c.Delete(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	waitSkyhook(t, "pdb", time.Minute, isReady)
	if err := c.Get(ctx, client.ObjectKeyFromObject(web), web); err == nil && web.DeletionTimestamp.IsZero() {
		t.Error("the drained pod is still on the node")
	}
	for _, key := range []string{"skyhook.nvidia.com/drainStart_pdb", "skyhook.nvidia.com/drainBlocked_pdb"} {
		if v, ok := getNode(t, "pdb-0").Annotations[key]; ok {
			t.Errorf("%s left on the drained node: %q", key, v)
		}
	}
}

// A node an admin cordoned stays cordoned after the Skyhook's interrupt.
func TestAdminCordonSurvivesTheInterrupt(t *testing.T) {
	createNodes(t, simnode.Numbered("admin", 1, map[string]string{"pool": "admin"})...)
	c := k8sClient(t)
	ctx := context.Background()
	if err := c.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "admin-0"}},
		client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"unschedulable":true}}`))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Patch(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "admin-0"}},
			client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"unschedulable":null}}`)))
	})
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "admin"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "admin"}},
			Packages:     skyhookv1.Packages{"tuning": withInterrupt(pkg("1.0.0", "ghcr.io/x/tuning", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot})},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "admin", time.Minute, isReady)
	if hosts.Reboots()["admin-0"] != 1 {
		t.Errorf("reboots %v, want admin-0 rebooted once", hosts.Reboots())
	}
	n := getNode(t, "admin-0")
	if !n.Spec.Unschedulable || n.Annotations[cordon.Annotation] != "" {
		t.Errorf("the admin's cordon: unschedulable %v, signed %q; want it kept and unsigned", n.Spec.Unschedulable, n.Annotations[cordon.Annotation])
	}
}

// The operator stopped while a node reboots picks the reboot up when it
// starts again: the node is not rebooted twice and the rollout completes.
func TestOperatorRestartDuringARebootDoesNotRebootAgain(t *testing.T) {
	createNodes(t, simnode.Numbered("rebootrestart", 1, map[string]string{"pool": "rebootrestart"})...)
	c := k8sClient(t)
	ctx := context.Background()
	created := countStagePods(t, "rebootrestart")
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "rebootrestart"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "rebootrestart"}},
			Packages:     skyhookv1.Packages{"driver": withInterrupt(pkg("1.0.0", "ghcr.io/x/driver", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot})},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	eventually(t, "the node to reboot", func() bool { return hosts.Reboots()["rebootrestart-0"] == 1 })
	stopOperator()
	<-operatorDone
	if isReady(waitSkyhook(t, "rebootrestart", time.Second, func(*skyhookv1.Skyhook) bool { return true })) {
		t.Fatal("Ready before the operator was stopped; the test proves nothing")
	}
	if err := startOperator(); err != nil {
		t.Fatal(err)
	}
	waitSkyhook(t, "rebootrestart", time.Minute, isReady)
	if r := hosts.Reboots()["rebootrestart-0"]; r != 1 || created()["rebootrestart-0/interrupt"] != 1 {
		t.Errorf("%d reboots and %d interrupt pods, want one of each", r, created()["rebootrestart-0/interrupt"])
	}
}

// A configMap change reruns config; a changed key with a reboot
// configInterrupt reboots the node, a key without one does not.
func TestConfigInterruptsFollowTheChangedKeys(t *testing.T) {
	createNodes(t, simnode.Numbered("cfgint", 1, map[string]string{"pool": "cfgint"})...)
	c := k8sClient(t)
	ctx := context.Background()
	created := countStagePods(t, "cfgint")
	p := pkg("1.0.0", "ghcr.io/x/kernel", nil)
	p.ConfigMap = map[string]string{"kernel.conf": "a", "notes.txt": "x"}
	p.ConfigInterrupts = map[string]skyhookv1.Interrupt{"*.conf": {Type: skyhookv1.InterruptReboot}}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "cfgint"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "cfgint"}},
			Packages:     skyhookv1.Packages{"kernel": p},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "cfgint", time.Minute, isReady)

	change := func(key, value string) {
		t.Helper()
		eventually(t, "the configMap change to apply", func() bool {
			var cur skyhookv1.Skyhook
			if err := c.Get(ctx, client.ObjectKey{Name: "cfgint"}, &cur); err != nil {
				return false
			}
			k := cur.Spec.Packages["kernel"]
			k.ConfigMap[key] = value
			cur.Spec.Packages["kernel"] = k
			return c.Update(ctx, &cur) == nil
		})
		waitSkyhook(t, "cfgint", time.Minute, isReady)
	}
	change("notes.txt", "y")
	if r := hosts.Reboots()["cfgint-0"]; r != 0 || created()["cfgint-0/config"] != 2 {
		t.Errorf("after a change of notes.txt: %d reboots, %d config runs; want none and a second config run", r, created()["cfgint-0/config"])
	}
	change("kernel.conf", "b")
	runs := created()
	if r := hosts.Reboots()["cfgint-0"]; r != 1 || runs["cfgint-0/config"] != 3 || runs["cfgint-0/interrupt"] != 1 || runs["cfgint-0/post-interrupt"] != 1 {
		t.Errorf("after a change of kernel.conf: %d reboots and pods %v; want one reboot after a third config run, then post-interrupt", r, runs)
	}
	if n := getNode(t, "cfgint-0"); n.Spec.Unschedulable {
		t.Error("left cordoned")
	}
}

// A node that does not come back with a new boot ID within the reboot
// timeout is erroring with a message; when it does come back, the interrupt
// counts and the rollout completes.
func TestRebootNotBackInTimeIsErroring(t *testing.T) {
	createNodes(t, simnode.Numbered("slowboot", 1, map[string]string{"pool": "slowboot"})...)
	c := k8sClient(t)
	ctx := context.Background()
	hosts.SetDowntime("slowboot-0", 3*rebootTimeout)
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "slowboot"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "slowboot"}},
			Packages:     skyhookv1.Packages{"driver": withInterrupt(pkg("1.0.0", "ghcr.io/x/driver", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot})},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	got := waitSkyhook(t, "slowboot", time.Minute, func(s *skyhookv1.Skyhook) bool {
		return s.Status.Status == skyhookv1.StatusErroring && len(s.Status.NodesNeedingAttention) > 0 &&
			strings.Contains(s.Status.NodesNeedingAttention[0].Message, "NotReady since")
	})
	if msg := got.Status.NodesNeedingAttention[0].Message; !strings.Contains(msg, "not back Ready with a new boot ID") ||
		!strings.Contains(msg, "NotReady since "+readySince(getNode(t, "slowboot-0")).UTC().Format(time.RFC3339)) {
		t.Errorf("attention %q; want the reboot named, and since when the node is NotReady", msg)
	}
	if isNodeReady(getNode(t, "slowboot-0")) {
		t.Fatal("the node is already back; the test proves nothing")
	}
	waitSkyhook(t, "slowboot", time.Minute, isReady)
	if r := hosts.Reboots()["slowboot-0"]; r != 1 {
		t.Errorf("%d reboots, want one", r)
	}
}

// NodeWright's order for a package that will interrupt: the node is
// cordoned and drained before its apply, not only before the interrupt; it
// stays cordoned through config and the interrupt, and is uncordoned once
// complete.
func TestPackageWithInterruptIsDrainedBeforeApply(t *testing.T) {
	createNodes(t, simnode.Numbered("drainfirst", 1, map[string]string{"pool": "drainfirst"})...)
	c := k8sClient(t)
	ctx := context.Background()
	workload := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "workload", Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: "drainfirst-0", Containers: []corev1.Container{{Name: "main", Image: "ghcr.io/x/app:1"}}},
	}
	if err := c.Create(ctx, workload); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), workload) })

	// What the node looked like when the apply pod was created.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := env.Clientset.CoreV1().Pods(operatorNamespace).Watch(wctx, metav1.ListOptions{
		LabelSelector: stagepod.SkyhookLabel + "=drainfirst," + stagepod.StageLabel + "=apply"})
	if err != nil {
		t.Fatal(err)
	}
	type seen struct{ cordoned, workloadLeft bool }
	atApply := make(chan seen, 1)
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			n := getNode(t, "drainfirst-0")
			err := c.Get(ctx, client.ObjectKeyFromObject(workload), &corev1.Pod{})
			atApply <- seen{cordoned: n.Spec.Unschedulable, workloadLeft: err == nil}
			return
		}
	}()

	second := metav1.Duration{Duration: time.Second}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "drainfirst"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "drainfirst"}},
			// The workload has no controller: the drain evicts it all the
			// same, as NodeWright's does.
			Drain: &skyhookv1.DrainOptions{Timeout: &second, OnTimeout: skyhookv1.DrainDelete},
			Packages: skyhookv1.Packages{"driver": withInterrupt(pkg("1.0.0", "ghcr.io/x/driver", nil),
				skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: []string{"containerd"}})},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	waitSkyhook(t, "drainfirst", time.Minute, isReady)

	select {
	case s := <-atApply:
		if !s.cordoned || s.workloadLeft {
			t.Errorf("when the apply pod was created: cordoned %v, workload still there %v; want cordoned and drained", s.cordoned, s.workloadLeft)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no apply pod seen")
	}
	n := getNode(t, "drainfirst-0")
	if n.Spec.Unschedulable || n.Annotations[skyhookv1.InterruptAnnotation("drainfirst")] != "" {
		t.Errorf("after the rollout: unschedulable %v, interrupt record %q", n.Spec.Unschedulable, n.Annotations[skyhookv1.InterruptAnnotation("drainfirst")])
	}
	if got := n.Annotations[skyhookv1.NodeStateAnnotation("drainfirst")]; !strings.Contains(got, `"stage":"post-interrupt","state":"complete"`) {
		t.Errorf("record %s", got)
	}
}

// A service interrupt that keeps failing is tried the first time and
// JOB_BACKOFF_LIMIT more, then given up as NodeWright v0.20 gives it up: the
// node erroring, and a Warning event (reason Interrupt, action
// RestartLimitExceeded) on the node and on the rollout, once. For both
// kinds: the node's status key and the event's object are the kind's.
func TestInterruptRestartLimit(t *testing.T) {
	eachKind(t, func(t *testing.T, k kindCase) {
		node := k.name("restartlimit-0")
		createNodes(t, simnode.Numbered(k.name("restartlimit"), 1, map[string]string{"pool": k.name("restartlimit")})...)
		created := countStagePodsOf(t, k.ref("restartlimit"))
		p := withInterrupt(pkg("1.0.0", "ghcr.io/x/tuning", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: []string{"kubelet"}})
		p.Env = []corev1.EnvVar{{Name: simnode.ExitCodeEnv, Value: "3"}, {Name: simnode.ExitContainersEnv, Value: "interrupt"}}
		k.create(t, "restartlimit", skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": k.name("restartlimit")}},
			Packages:     skyhookv1.Packages{"tuning": p},
		})
		k.wait(t, "restartlimit", 2*time.Minute, func(s *skyhookv1.Skyhook) bool { return s.Status.Status == skyhookv1.StatusErroring })
		waitWarning(t, node, "Interrupt", "failed 4 times and is given up")
		waitWarning(t, k.name("restartlimit"), "Interrupt", "failed 4 times and is given up")
		if n := created()[node+"/interrupt"]; n != 4 {
			t.Errorf("interrupt tried %d times, want 4 (the first and JOB_BACKOFF_LIMIT 3 more)", n)
		}
		if status := getNode(t, node).Labels[k.ref("restartlimit").StatusKey()]; status != "erroring" {
			t.Errorf("node status %q under %s, want erroring", status, k.ref("restartlimit").StatusKey())
		}
	})
}

// readySince is when the node's Ready condition last changed.
func readySince(n *corev1.Node) time.Time {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
