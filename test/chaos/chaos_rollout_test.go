package chaos

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/gitserver"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

const skyhookName = "chaos"

// fleet is the nodes: two zones, one compartment each.
func fleet() []simnode.Node {
	nodes := make([]simnode.Node, chaosMode().nodes)
	for i := range nodes {
		zone := "a"
		if i%2 == 1 {
			zone = "b"
		}
		nodes[i] = simnode.Node{Name: fmt.Sprintf("chaos-%d", i), Labels: map[string]string{"pool": "chaos", "zone": zone}}
	}
	return nodes
}

// The compartments' budgets, as the policy in Git states them.
const zoneABudget, zoneBBudget = 4, 3

// manifests are what Git holds for a wave: the policy and the Skyhook, a
// reboot package and a service-restart package (its version moves each
// wave, so later waves restart services only).
func manifests(driverVersion string) map[string]string {
	return map[string]string{
		"sets/policy.yaml": fmt.Sprintf(`apiVersion: skyhook.nvidia.com/v1alpha1
kind: DeploymentPolicy
metadata: {name: chaos-policy}
spec:
  default: {budget: {count: 1}}
  compartments:
  - name: zone-a
    selector: {matchLabels: {zone: a}}
    budget: {count: %d}
  - name: zone-b
    selector: {matchLabels: {zone: b}}
    budget: {count: %d}
`, zoneABudget, zoneBBudget),
		"sets/skyhook.yaml": fmt.Sprintf(`apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: %s}
spec:
  nodeSelectors: {matchLabels: {pool: chaos}}
  deploymentPolicy: chaos-policy
  packages:
    kernel:
      version: "1.0.0"
      image: ghcr.io/x/kernel
      interrupt: {type: reboot}
      env: [{name: %[2]s, value: 800ms}]
    driver:
      version: %[3]q
      image: ghcr.io/x/driver
      interrupt: {type: service, services: [nvidia-persistenced]}
      env: [{name: %[2]s, value: 800ms}]
`, skyhookName, simnode.DurationEnv, driverVersion),
	}
}

// TestRolloutKeepsItsPromisesUnderFaults: see the package comment. The
// run's table is logged (go test -v, make test-chaos).
func TestRolloutKeepsItsPromisesUnderFaults(t *testing.T) {
	m := chaosMode()
	s := seed(t)
	r := rand.New(rand.NewSource(s))
	t.Logf("seed %d (SKYHOOK_CHAOS_SEED=%d replays the fault order)", s, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testenv.Client(t, env)

	ops, err := startOperators(env, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ops.stop()
	admin := cordonByAdmin(t, "chaos-1", "chaos-2")
	obs := newObserver(skyhookName, []compartmentBudget{
		{name: "zone-a", selector: labels.SelectorFromSet(labels.Set{"zone": "a"}), limit: zoneABudget},
		{name: "zone-b", selector: labels.SelectorFromSet(labels.Set{"zone": "b"}), limit: zoneBBudget},
	}, admin)
	obs.start(ctx, env)
	inv, err := testenv.WatchInvariants(ctx, env, operatorNamespace)
	if err != nil {
		t.Fatal(err)
	}
	hosts := env.SimulateHosts(ctx, time.Second)

	wave := 0
	push := startGitOps(t, c)
	push(driverVersion(wave))
	writerCtx, stopWriter := context.WithCancel(ctx)
	patches := conflictingWriter(writerCtx, rand.New(rand.NewSource(s+1)), m.nodes)

	in := &injector{ops: ops, obs: obs, r: r}
	var injections []injection
	for i, kind := range plan(m, r) {
		time.Sleep(time.Duration(1000+r.Intn(2000)) * time.Millisecond)
		if rolledOut(t, c, driverVersion(wave)) { // keep the faults coming on a moving rollout
			wave++
			push(driverVersion(wave))
		}
		inj, err := in.inject(ctx, kind)
		if err != nil {
			t.Fatalf("injecting fault %d (%s): %v", i+1, kind, err)
		}
		t.Logf("fault %2d at %s: %s %s (%s)", i+1, inj.start.Format("15:04:05.0"), kind, inj.detail, inj.end.Sub(inj.start).Round(100*time.Millisecond))
		injections = append(injections, inj)
	}
	if !waitRolledOut(c, driverVersion(wave), 10*time.Minute) {
		t.Fatalf("the last wave (driver %s) did not roll out within 10 minutes of the faults\n%s", driverVersion(wave), dump(c))
	}
	stopWriter()
	table := report(injections, obs, s, m, patches(), ops.exitedByThemselves())
	t.Log("\n" + table)
	if dir := os.Getenv("SKYHOOK_CHAOS_REPORT"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "chaos-report.md"), []byte(table), 0o644)
	}

	for _, v := range append(obs.Violations(), inv.Violations()...) {
		t.Errorf("violation: %s", v)
	}
	checkEnd(t, c, driverVersion(wave), admin)
	if reboots := len(hosts.Reboots()); reboots == 0 {
		t.Errorf("no node rebooted for its interrupt")
	}
}

func driverVersion(wave int) string { return fmt.Sprintf("1.%d.0", wave) }

// startGitOps makes the Git repository, its GitRepository and the
// PackageSet, and returns a function that pushes a wave.
func startGitOps(t *testing.T, c client.Client) func(driverVersion string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	url, err := git.Create("chaos")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	pushed := false
	push := func(version string) {
		if _, err := gitserver.Push(work, url, manifests(version), "driver "+version); err != nil {
			t.Fatal(err)
		}
		if pushed {
			return
		}
		pushed = true
		repo := &sourcev1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: "chaos", Namespace: "fleet"},
			Spec: sourcev1.GitRepositorySpec{URL: url, Interval: metav1.Duration{Duration: 2 * time.Second},
				Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
		}
		set := &skyhookv1.PackageSet{
			ObjectMeta: metav1.ObjectMeta{Name: "chaos", Namespace: "fleet"},
			Spec: skyhookv1.PackageSetSpec{SourceRef: skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "chaos"},
				Path: "sets", Interval: metav1.Duration{Duration: 10 * time.Second}, RetryInterval: &metav1.Duration{Duration: 2 * time.Second}},
		}
		for _, obj := range []client.Object{repo, set} {
			if err := c.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	return push
}

// rolledOut: the Skyhook runs the driver version given, is complete and
// Ready for its generation.
func rolledOut(t *testing.T, c client.Client, version string) bool {
	sk := &skyhookv1.Skyhook{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: skyhookName}, sk); err != nil {
		return false
	}
	return sk.Spec.Packages["driver"].Version == version && sk.Status.ObservedGeneration == sk.Generation &&
		sk.Status.Status == skyhookv1.StatusComplete && conditions.IsReady(sk)
}

// cordonByAdmin cordons nodes as an admin would before the rollout; the
// operator must work around them and leave them cordoned.
func cordonByAdmin(t *testing.T, names ...string) map[string]bool {
	t.Helper()
	cordoned := map[string]bool{}
	for _, name := range names {
		if _, err := env.Clientset.CoreV1().Nodes().Patch(context.Background(), name, "application/merge-patch+json",
			[]byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		cordoned[name] = true
	}
	return cordoned
}

// checkEnd: every node complete with the exact records (each package at
// its version, complete, in the same stage on every node), the admin's
// cordons kept and no other, no stage pod left.
func checkEnd(t *testing.T, c client.Client, driver string, admin map[string]bool) {
	t.Helper()
	ctx := context.Background()
	want := map[string]string{"kernel": "1.0.0", "driver": driver}
	stages := map[string]skyhookv1.Stage{}
	for _, n := range fleet() {
		node, err := env.Clientset.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s := node.Labels[skyhookv1.StatusKey(skyhookName)]; s != string(skyhookv1.StatusComplete) {
			t.Errorf("node %s is %q, want complete", n.Name, s)
		}
		if node.Spec.Unschedulable != admin[n.Name] {
			t.Errorf("node %s: unschedulable=%v, want %v (cordoned by an admin: %v)", n.Name, node.Spec.Unschedulable, admin[n.Name], admin[n.Name])
		}
		state, err := nodestate.Read(node, skyhookv1.Skyhooks.Named(skyhookName))
		if err != nil {
			t.Errorf("node %s: its record does not read: %v", n.Name, err)
			continue
		}
		if len(state) != len(want) {
			t.Errorf("node %s records %d package versions, want %d: %v", n.Name, len(state), len(want), state)
		}
		for pkg, version := range want {
			e, ok := state[skyhookv1.NodeStateKey(pkg, version)]
			if !ok || e.State != skyhookv1.StateComplete {
				t.Errorf("node %s: %s %s recorded as %+v, want complete", n.Name, pkg, version, e)
				continue
			}
			if first, seen := stages[pkg]; seen && first != e.Stage {
				t.Errorf("node %s: %s ended in stage %s, other nodes in %s", n.Name, pkg, e.Stage, first)
			}
			stages[pkg] = e.Stage
		}
	}
	testenv.Eventually(t, "no stage pod left", time.Minute, func() bool {
		pods, err := env.Clientset.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: stagepod.SkyhookLabel})
		return err == nil && len(pods.Items) == 0
	})
}

func waitRolledOut(c client.Client, version string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if rolledOut(nil, c, version) {
			return true
		}
		time.Sleep(time.Second)
	}
	return false
}

// dump says where the rollout stands, for a failure message.
func dump(c client.Client) string {
	ctx := context.Background()
	var b strings.Builder
	set := &skyhookv1.PackageSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "fleet", Name: "chaos"}, set); err == nil {
		for _, cond := range set.Status.Conditions {
			fmt.Fprintf(&b, "PackageSet %s=%s %s: %s\n", cond.Type, cond.Status, cond.Reason, cond.Message)
		}
	}
	sk := &skyhookv1.Skyhook{}
	if err := c.Get(ctx, client.ObjectKey{Name: skyhookName}, sk); err == nil {
		fmt.Fprintf(&b, "Skyhook generation %d observed %d status %s\n", sk.Generation, sk.Status.ObservedGeneration, sk.Status.Status)
		for _, cond := range sk.Status.Conditions {
			fmt.Fprintf(&b, "Skyhook %s=%s %s: %s\n", cond.Type, cond.Status, cond.Reason, cond.Message)
		}
	} else {
		fmt.Fprintf(&b, "Skyhook: %v\n", err)
	}
	counts := map[string]int{}
	nodes, _ := env.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	for _, n := range nodes.Items {
		counts[n.Labels[skyhookv1.StatusKey(skyhookName)]]++
	}
	fmt.Fprintf(&b, "nodes by status: %v\n", counts)
	pods, _ := env.Clientset.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{})
	fmt.Fprintf(&b, "pods in %s: %d\n", operatorNamespace, len(pods.Items))
	for i := range 2 {
		fmt.Fprintf(&b, "the end of operator-%d.log:\n%s\n", i, proc.TailFile(filepath.Join(env.Dir, "logs", fmt.Sprintf("operator-%d.log", i)), 15))
	}
	return b.String()
}
