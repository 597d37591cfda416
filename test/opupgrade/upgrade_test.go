package opupgrade

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

const (
	skyhookName = "upgrade"
	fleetSize   = 20
	budget      = 3
)

// fleet is the rollout's nodes.
func fleet() []simnode.Node {
	return simnode.Numbered("upgrade", fleetSize, map[string]string{"pool": "upgrade"})
}

// upgradeSkyhook has a package that reboots the node and one with a
// configMap, so every kind of record is on the nodes: nodeState, status,
// config_, interrupt_ and the cordon's signature.
var upgradeSkyhook = fmt.Sprintf(`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: %s}
spec:
  nodeSelectors: {matchLabels: {pool: upgrade}}
  interruptionBudget: {count: %d}
  packages:
    kernel:
      version: "1.0.0"
      image: ghcr.io/x/kernel
      interrupt: {type: reboot}
      env: [{name: %[3]s, value: 150ms}]
    tuning:
      version: "2.1.0"
      image: ghcr.io/x/tuning
      configMap: {sysctl.conf: "vm.swappiness=10"}
      env: [{name: %[3]s, value: 150ms}]
`, skyhookName, budget, simnode.DurationEnv)

// wantStages are the stages each node runs once, by package and version.
var wantStages = map[string][]string{
	"kernel@1.0.0": {"apply", "config", "interrupt", "post-interrupt"},
	"tuning@2.1.0": {"apply", "config"},
}

// wantRecord is a node's record once complete.
var wantRecord = skyhookv1.NodeState{
	"kernel|1.0.0": {Name: "kernel", Version: "1.0.0", Image: "ghcr.io/x/kernel", Stage: skyhookv1.StagePostInterrupt, State: skyhookv1.StateComplete},
	"tuning|2.1.0": {Name: "tuning", Version: "2.1.0", Image: "ghcr.io/x/tuning", Stage: skyhookv1.StageConfig, State: skyhookv1.StateComplete},
}

// TestUpgradeMidRollout: the previous version rolls the Skyhook out until
// about half of the nodes are complete and others are in their stages or
// their interrupt; it is SIGKILLed (a pod replaced without a graceful
// stop) and the current version starts in its place (same namespace,
// webhook port and certificate directory) and finishes from the records
// the old one wrote. Nothing is done twice: no stage that succeeded runs
// again, no node reboots twice, a node complete before the switch gets no
// stage pod at all; and the end is exact: every record complete at its
// version, no cordon left, the Skyhook Ready.
func TestUpgradeMidRollout(t *testing.T) {
	if errors.Is(previousErr, errNoHistory) {
		t.Skipf("no upgrade from the previous version to test: %v", previousErr)
	}
	if previousErr != nil {
		t.Fatal(previousErr)
	}
	ctx := context.Background()
	c := testenv.Client(t, env)
	pods := watchStagePods(t, skyhookName)
	invCtx, stopInv := context.WithCancel(ctx)
	defer stopInv()
	inv, err := testenv.WatchInvariants(invCtx, env, operatorNamespace)
	if err != nil {
		t.Fatal(err)
	}

	d := newDeployment(t)
	old := d.start(t, previousBinary, "old")
	sk := &skyhookv1.Skyhook{}
	if err := yaml.UnmarshalStrict([]byte(upgradeSkyhook), sk); err != nil {
		t.Fatal(err)
	}
	// The old operator's webhooks answer once it has its certificates.
	testenv.Eventually(t, "the Skyhook created through the old operator's webhooks", time.Minute, func() bool {
		old.running(t, d)
		return c.Create(ctx, sk.DeepCopy()) == nil
	})
	started := time.Now()

	// Half way: about half of the nodes complete, others in progress, and
	// (when the timing gives it within a few seconds) a node in its
	// interrupt: the interrupt pod running, or the reboot issued and not
	// yet seen through.
	var halfway time.Time
	testenv.Eventually(t, "half of the nodes complete under the old operator", 3*time.Minute, func() bool {
		old.running(t, d)
		s := survey(t)
		if s.complete() < fleetSize/2 || s.inProgress() == 0 {
			return false
		}
		if halfway.IsZero() {
			halfway = time.Now()
		}
		for _, phase := range s.interrupts {
			if phase == interrupt.PhaseInterrupt || phase == interrupt.PhaseVerify {
				return true
			}
		}
		return time.Since(halfway) > 5*time.Second
	})
	old.kill()
	// Nothing creates stage pods now: what the informer has seen once it
	// holds every pod there is, is what the old operator made.
	testenv.Eventually(t, "the informer to hold every stage pod", 10*time.Second, func() bool {
		list, err := env.Clientset.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		seen := pods.seen()
		for _, p := range list.Items {
			if !seen[p.UID] && p.Labels[stagepod.SkyhookLabel] == skyhookName {
				return false
			}
		}
		return true
	})
	before := pods.seen()
	at := survey(t)
	t.Logf("SIGKILLed the old operator %s after the Skyhook's creation: %d nodes complete, in progress: %s",
		time.Since(started).Round(100*time.Millisecond), at.complete(), at.describeInProgress())
	for name := range at.completeNodes {
		if v := at.nodes[name].Annotations[skyhookv1.VersionAnnotation(skyhookName)]; v != oldVersion(previousCommit) {
			t.Fatalf("node %s, complete at the switch, was last written by %q, not the old operator (%s)", name, v, oldVersion(previousCommit))
		}
	}

	switched := time.Now()
	d.start(t, currentBinary, "new")
	var done skyhookv1.Skyhook
	testenv.Eventually(t, "the Skyhook Ready under the new operator", 3*time.Minute, func() bool {
		return c.Get(ctx, client.ObjectKey{Name: skyhookName}, &done) == nil && done.Status.ObservedGeneration == done.Generation &&
			done.Status.Status == skyhookv1.StatusComplete && conditions.IsReady(&done)
	})
	t.Logf("the new operator finished the rollout %s after it started", time.Since(switched).Round(100*time.Millisecond))
	if v := done.Annotations[skyhookv1.SkyhookVersionAnnotation]; v != currentVersion {
		t.Errorf("the Skyhook says operator version %q, want %q", v, currentVersion)
	}
	if done.Status.CompleteNodes != fmt.Sprintf("%d/%d", fleetSize, fleetSize) {
		t.Errorf("completeNodes %q", done.Status.CompleteNodes)
	}

	// A node complete at the switch is not written again (its version_
	// still names the old operator); every other node's record was last
	// written by the new one.
	end := survey(t)
	for _, n := range fleet() {
		node := end.nodes[n.Name]
		writer := currentVersion
		if at.completeNodes[n.Name] {
			writer = oldVersion(previousCommit)
			for _, key := range []string{skyhookv1.NodeStateAnnotation(skyhookName), skyhookv1.ConfigAnnotation(skyhookName)} {
				if was, is := at.nodes[n.Name].Annotations[key], node.Annotations[key]; was != is {
					t.Errorf("node %s, complete at the switch: %s rewritten from %s to %s", n.Name, key, was, is)
				}
			}
		}
		checkNodeEnd(t, node, skyhookName, wantRecord, writer)
	}

	// No stage ran twice, none was left out.
	succeeded := pods.succeededByStage()
	for _, n := range fleet() {
		for pkg, stages := range wantStages {
			for _, stage := range stages {
				key := n.Name + "/" + pkg + "/" + stage
				if got := succeeded[key]; got != 1 {
					t.Errorf("stage %s succeeded in %d pods, want 1", key, got)
				}
				delete(succeeded, key)
			}
		}
	}
	for key, n := range succeeded {
		t.Errorf("stage %s succeeded in %d pods, and should not run", key, n)
	}
	reboots := hosts.Reboots()
	for _, n := range fleet() {
		if reboots[n.Name] != 1 {
			t.Errorf("node %s rebooted %d times, want once", n.Name, reboots[n.Name])
		}
	}
	// A node complete before the switch is left alone.
	var after []string
	for _, p := range pods.since(before) {
		if at.completeNodes[p.node] {
			after = append(after, p.name+" ("+p.key()+")")
		}
	}
	if len(after) > 0 {
		t.Errorf("stage pods created after the switch on nodes complete before it: %s", strings.Join(after, ", "))
	}
	t.Logf("stage pods: %d by the old operator, %d by the new one", len(before), len(pods.since(before)))
	stopInv()
	for _, v := range inv.Violations() {
		t.Errorf("invariant: %s", v)
	}
}

// checkNodeEnd: the node is complete for the Skyhook with exactly the
// record want, written last by the operator of version writer, with no
// interrupt record and no cordon of the Skyhook's left.
func checkNodeEnd(t *testing.T, node *corev1.Node, skyhook string, want skyhookv1.NodeState, writer string) {
	t.Helper()
	if node == nil {
		t.Errorf("a node is gone")
		return
	}
	if s := node.Labels[skyhookv1.StatusKey(skyhook)]; s != string(skyhookv1.StatusComplete) {
		t.Errorf("node %s is %q, want complete", node.Name, s)
	}
	state, err := nodestate.Read(node, skyhookv1.Skyhooks.Named(skyhook))
	if err != nil {
		t.Errorf("node %s: %v", node.Name, err)
	} else if len(state) != len(want) {
		t.Errorf("node %s records %v, want %v", node.Name, state, want)
	} else {
		for key, w := range want {
			if state[key] != w {
				t.Errorf("node %s records %s as %+v, want %+v", node.Name, key, state[key], w)
			}
		}
	}
	if v := node.Annotations[skyhookv1.VersionAnnotation(skyhook)]; v != writer {
		t.Errorf("node %s: version_%s is %q, want %q", node.Name, skyhook, v, writer)
	}
	if raw, ok := node.Annotations[skyhookv1.InterruptAnnotation(skyhook)]; ok {
		t.Errorf("node %s still has an interrupt record: %s", node.Name, raw)
	}
	if node.Spec.Unschedulable || node.Annotations[cordon.Annotation] != "" || node.Annotations[skyhookv1.CordonAnnotation(skyhook)] != "" {
		t.Errorf("node %s still cordoned: unschedulable %v, %s %q, %s %q", node.Name, node.Spec.Unschedulable,
			cordon.Annotation, node.Annotations[cordon.Annotation], skyhookv1.CordonAnnotation(skyhook), node.Annotations[skyhookv1.CordonAnnotation(skyhook)])
	}
}

// fleetSurvey is the fleet's nodes at one moment.
type fleetSurvey struct {
	nodes         map[string]*corev1.Node
	completeNodes map[string]bool
	busy          []string
	// interrupts are the nodes with an interrupt record, by phase.
	interrupts map[string]interrupt.Phase
}

func survey(t *testing.T) fleetSurvey {
	t.Helper()
	list, err := env.Clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "pool=upgrade"})
	if err != nil {
		t.Fatal(err)
	}
	s := fleetSurvey{nodes: map[string]*corev1.Node{}, completeNodes: map[string]bool{}, interrupts: map[string]interrupt.Phase{}}
	for i := range list.Items {
		n := &list.Items[i]
		s.nodes[n.Name] = n
		switch skyhookv1.Status(n.Labels[skyhookv1.StatusKey(skyhookName)]) {
		case skyhookv1.StatusComplete:
			s.completeNodes[n.Name] = true
		case skyhookv1.StatusInProgress, skyhookv1.StatusErroring:
			s.busy = append(s.busy, n.Name)
		}
		if r := interrupt.Read(n, skyhookv1.Skyhooks.Named(skyhookName)); r != nil {
			s.interrupts[n.Name] = r.Phase
		}
	}
	sort.Strings(s.busy)
	return s
}

func (s fleetSurvey) complete() int   { return len(s.completeNodes) }
func (s fleetSurvey) inProgress() int { return len(s.busy) }

// describeInProgress says where each node in progress stands.
func (s fleetSurvey) describeInProgress() string {
	var parts []string
	for _, name := range s.busy {
		state, _ := nodestate.Read(s.nodes[name], skyhookv1.Skyhooks.Named(skyhookName))
		var stages []string
		for _, key := range sortedKeys(state) {
			stages = append(stages, fmt.Sprintf("%s %s %s", key, state[key].Stage, state[key].State))
		}
		desc := name + " [" + strings.Join(stages, ", ") + "]"
		if phase, ok := s.interrupts[name]; ok {
			desc += " interrupt " + string(phase)
		}
		parts = append(parts, desc)
	}
	return strings.Join(parts, "; ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
