package reconcile_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/clustertest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// The rollout tests run the real operator (webhooks and reconciler) against
// the real apiserver and controller-manager, with KWOK running the stage
// pods. Each test makes its own pool of nodes (createNodes), labelled
// pool=<its name>, and they go when it ends.

var env *cluster.Cluster

const operatorNamespace = "skyhook-system"

// notReadyTimeout is short so that TestNotReadyNodeIsSkippedAndResumes
// need not wait ten minutes.
const notReadyTimeout = 3 * time.Second

// rebootTimeout is short so that TestRebootNotBackInTimeIsErroring need not
// wait ten minutes; the simulated reboots of the other tests take a second.
const rebootTimeout = 6 * time.Second

// pullSecret is the operator's image pull secret: every stage pod names it.
const pullSecret = "registry-credentials"

// stageTimeout is short so that TestStageOverItsTimeoutIsStoppedAndRetried
// need not wait an hour, and long enough for every other test's stages
// (3 s at most) with room for KWOK lagging.
const stageTimeout = 12 * time.Second

func TestMain(m *testing.M) {
	crds, err := testenv.CRDsWithFlux()
	if err != nil {
		panic(err)
	}
	var invariants *testenv.Invariants
	code := clustertest.Main(m, cluster.Options{CRDs: crds}, &env, func(ctx context.Context, c *cluster.Cluster) error {
		if err := testenv.OperatorLogs(c); err != nil {
			return err
		}
		// Watched through every test of the package, checked at the end.
		if invariants, err = testenv.WatchInvariants(ctx, c, operatorNamespace); err != nil {
			return err
		}
		mainCtx = ctx
		hosts = c.SimulateHosts(ctx, time.Second)
		return startOperator()
	})
	if invariants != nil {
		for _, v := range invariants.Violations() {
			fmt.Fprintln(os.Stderr, "invariant violated:", v)
			code = 1
		}
	}
	os.Exit(code)
}

var (
	// hosts reboots nodes for the interrupt pods that ask for it.
	hosts        *simnode.HostSimulator
	mainCtx      context.Context
	stopOperator context.CancelFunc
	operatorDone <-chan error
)

// startOperator runs the operator in this process until stopOperator,
// with the options of every test, changed by tweaks.
func startOperator(tweaks ...func(*operator.Options)) error {
	ctx, cancel := context.WithCancel(mainCtx)
	if err := operator.EnsureNamespace(ctx, env.Config, operatorNamespace); err != nil {
		cancel()
		return err
	}
	opts := operator.Options{Namespace: operatorNamespace, NotReadyTimeout: notReadyTimeout,
		RebootTimeout: rebootTimeout, StageTimeout: stageTimeout, ImagePullSecrets: []string{pullSecret}}
	for _, tweak := range tweaks {
		tweak(&opts)
	}
	done, err := operator.StartLocal(ctx, env.Config, opts)
	if err != nil {
		cancel()
		return fmt.Errorf("starting the operator: %w", err)
	}
	stopOperator, operatorDone = cancel, done
	return nil
}

// restartOperator restarts the operator with the tweaks, and once more as
// every test has it when the test ends.
func restartOperator(t *testing.T, tweaks ...func(*operator.Options)) {
	t.Helper()
	stopOperator()
	<-operatorDone
	if err := startOperator(tweaks...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopOperator()
		<-operatorDone
		if err := startOperator(); err != nil {
			t.Fatal(err)
		}
	})
}

func k8sClient(t testing.TB) client.Client { return testenv.Client(t, env) }

// waitSkyhook polls the Skyhook until cond holds.
func waitSkyhook(t *testing.T, name string, timeout time.Duration, cond func(*skyhookv1.Skyhook) bool) *skyhookv1.Skyhook {
	t.Helper()
	c := k8sClient(t)
	sk := &skyhookv1.Skyhook{}
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, sk); err != nil {
			return false, nil
		}
		return cond(sk), nil
	})
	if err != nil {
		t.Fatalf("Skyhook %s: %v; status: %+v", name, err, sk.Status)
	}
	return sk
}

// isReady is a Skyhook done with its whole status landed: Flux's patch
// helper writes the conditions in one request and the rest of the status
// in the next, so Ready alone can be read beside the previous counters
// (and, when the generation did not change, the previous
// observedGeneration too). Ready is True only when the status is
// complete, so that field tells the second request has landed.
func isReady(sk *skyhookv1.Skyhook) bool {
	return conditions.IsTrue(sk, meta.ReadyCondition) && sk.Status.ObservedGeneration == sk.Generation &&
		sk.Status.Status == skyhookv1.StatusComplete
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, what, time.Minute, cond)
}

// countStagePods counts the stage pods created for a Skyhook from now on,
// by "node/stage".
func countStagePods(t *testing.T, skyhook string) func() map[string]int {
	t.Helper()
	return countStagePodsOf(t, skyhookv1.Skyhooks.Named(skyhook))
}

// countStagePodsOf counts the stages run in the stage pods created for a
// rollout of any kind from now on, by "node/stage": a pod each, or a run's
// pod once for each of its stages (--stage-runs).
func countStagePodsOf(t *testing.T, rollout skyhookv1.RolloutRef) func() map[string]int {
	t.Helper()
	created := stagePodsCreatedOf(t, rollout)
	return func() map[string]int {
		counts := map[string]int{}
		for _, pod := range created() {
			for _, view := range stagepod.Views(pod) { // a pod of several packages under each
				for _, stage := range stagepod.Stages(view) {
					counts[pod.Spec.NodeName+"/"+string(stage)]++
				}
			}
		}
		return counts
	}
}

// stagesRun are the stages the pods run, in order: a pod's one, or each of
// a run's.
func stagesRun(pods []*corev1.Pod) []string {
	var stages []string
	for _, pod := range pods {
		for _, view := range stagepod.Views(pod) { // a pod of several packages, each in turn
			for _, stage := range stagepod.Stages(view) {
				stages = append(stages, string(stage))
			}
		}
	}
	return stages
}

// stagePodsCreated records the stage pods created for a Skyhook from now
// on, as they were created.
func stagePodsCreated(t *testing.T, skyhook string) func() []*corev1.Pod {
	t.Helper()
	return stagePodsCreatedOf(t, skyhookv1.Skyhooks.Named(skyhook))
}

// stagePodsCreatedOf records the stage pods created for a rollout of any
// kind from now on, as they were created.
func stagePodsCreatedOf(t *testing.T, rollout skyhookv1.RolloutRef) func() []*corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// Watched from the list's resourceVersion: a watch from none starts
	// with an Added event for every pod there already (a finished stage's
	// pod not deleted yet would count as created).
	opts := metav1.ListOptions{LabelSelector: rollout.Kind.OwnerLabel() + "=" + rollout.Name}
	existing, err := env.Clientset.CoreV1().Pods(operatorNamespace).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.ResourceVersion = existing.ResourceVersion
	w, err := env.Clientset.CoreV1().Pods(operatorNamespace).Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var created []*corev1.Pod
	var history []string // every event, told when the test fails
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			t.Logf("the stage pods of %s, event by event:\n%s", rollout.Name, strings.Join(history, "\n"))
		}
	})
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			history = append(history, podEvent(ev.Type, pod))
			if ev.Type == watch.Added {
				created = append(created, pod)
			}
			mu.Unlock()
		}
	}()
	return func() []*corev1.Pod {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(created)
	}
}

// podEvent is one line of a stage pod's history: when, what, which pod
// (name and UID), its phase and reason, its conditions that are true, and
// each init container's state.
func podEvent(what watch.EventType, pod *corev1.Pod) string {
	line := fmt.Sprintf("%s %-8s %s uid %.8s rv %s phase %s %s", time.Now().Format("15:04:05.000"), what, pod.Name, pod.UID, pod.ResourceVersion, pod.Status.Phase, pod.Status.Reason)
	if pod.DeletionTimestamp != nil {
		line += " deleting"
	}
	for _, c := range pod.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			line += " " + string(c.Type)
		}
	}
	for _, s := range pod.Status.InitContainerStatuses {
		state := "waiting"
		switch {
		case s.State.Running != nil:
			state = "running"
		case s.State.Terminated != nil:
			state = fmt.Sprintf("exit%d", s.State.Terminated.ExitCode)
		}
		line += fmt.Sprintf(" %s=%s", s.Name, state)
	}
	return line
}

// waitWarning waits for a Warning event about the named object with the
// reason and a note containing note.
func waitWarning(t *testing.T, regarding, reason, note string) {
	t.Helper()
	testenv.WaitWarning(t, env, regarding, reason, note)
}

// createPolicyYAML creates the DeploymentPolicy the YAML describes (see
// createPolicy).
func createPolicyYAML(t *testing.T, doc string) *skyhookv1.DeploymentPolicy {
	t.Helper()
	policy := &skyhookv1.DeploymentPolicy{}
	if err := yaml.UnmarshalStrict([]byte(doc), policy); err != nil {
		t.Fatal(err)
	}
	createPolicy(t, policy)
	return policy
}

// createPolicy creates a DeploymentPolicy and deletes it when the test
// ends, after the Skyhooks the test creates later (cleanups run last in,
// first out, and admission refuses to delete a policy in use).
func createPolicy(t *testing.T, policy *skyhookv1.DeploymentPolicy) {
	t.Helper()
	c := k8sClient(t)
	if err := c.Create(context.Background(), policy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eventually(t, "the policy to be deleted", func() bool { return c.Delete(context.Background(), policy) == nil })
	})
}

// createNodes adds simulated nodes for one test, waits until they are
// Ready, and deletes them when it ends.
func createNodes(t *testing.T, nodes ...simnode.Node) {
	t.Helper()
	if err := env.CreateNodes(context.Background(), nodes...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			_ = env.Clientset.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{})
		}
	})
}

// canaryNodes are n nodes of the pool, the first canaries of them labelled
// canary=true.
func canaryNodes(pool string, n, canaries int) []simnode.Node {
	nodes := simnode.Numbered(pool, n, nil)
	for i := range nodes {
		nodes[i].Labels = map[string]string{"pool": pool}
		if i < canaries {
			nodes[i].Labels["canary"] = "true"
		}
	}
	return nodes
}
