package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/skyhook-go/skyhook/api/nodestate"
	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// A stage pod taken away spends no try (NodeWright v0.20 ignores a
// failure with the condition DisruptionTarget): evicted through the
// apiserver's eviction API, or failed by its kubelet as preempted, its
// stage runs again as the same try, and the package completes with no
// restart counted and the node never erroring.
func TestDisruptedStagePodSpendsNoTry(t *testing.T) {
	created, history := oneNodeRollout(t, "disrupted", "6s")
	ctx := context.Background()

	applyPod := func(n int) *corev1.Pod {
		t.Helper()
		eventually(t, "apply pod "+string(rune('0'+n)), func() bool { return len(applyPods(created())) >= n })
		return applyPods(created())[n-1]
	}
	first := applyPod(1)
	if err := env.Clientset.CoreV1().Pods(operatorNamespace).EvictV1(ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: first.Name, Namespace: operatorNamespace}}); err != nil {
		t.Fatalf("evicting %s: %v", first.Name, err)
	}
	second := applyPod(2)
	waitStepRunning(t, second.Name)
	// What a kubelet writes on preempting the pod for a critical one.
	writePodStatus(t, second.Name, "failing it as preempted", func(preempted *corev1.Pod) {
		preempted.Status.Phase, preempted.Status.Reason, preempted.Status.Message = corev1.PodFailed, "Preempting", "Preempted in order to admit critical pod"
		preempted.Status.Conditions = append(preempted.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "TerminationByKubelet", Message: "Pod was terminated in response to imminent node shutdown.", LastTransitionTime: metav1.Now()})
	})
	waitSkyhook(t, "disrupted", 2*time.Minute, isReady)

	pods := applyPods(created())
	for _, p := range pods {
		if a := p.Annotations[stagepod.AttemptAnnotation]; a != "0" {
			t.Errorf("apply pod %s is try %s: a disrupted try was spent", p.Name, a)
		}
	}
	if len(pods) != 3 {
		var seen []string
		for _, p := range pods {
			seen = append(seen, fmt.Sprintf("%s uid %s at %s", p.Name, p.UID, p.CreationTimestamp.Format(time.RFC3339)))
		}
		t.Errorf("%d apply pods, want 3: the first, after its eviction, after its preemption:\n%s", len(pods), strings.Join(seen, "\n"))
	}
	neverErroring(t, history(), "tuning", "1.0.0")
	entry := packageEntry(t, "disrupted-0", "disrupted", "tuning", "1.0.0")
	if entry.State != skyhookv1.StateComplete || entry.Restarts != 0 {
		t.Errorf("tuning on disrupted-0: %+v, want complete with no restart", entry)
	}
}

// A stage pod its kubelet refused to admit (Failed with no container ever
// started: OutOfcpu) ran nothing of the package. As NodeWright v0.20 counts
// it, it spends a try but is never the package's failure: past the retry
// budget (2 here) the stage is still tried again, the node is never
// erroring, and the rollout says why it waits.
func TestRefusedStagePodIsNeverAPackageFailure(t *testing.T) {
	restartOperator(t, func(o *operator.Options) { o.MaxAttempts = 2 })
	created, history := oneNodeRollout(t, "refused", "1h")

	for n := 1; n <= 2; n++ {
		eventually(t, "apply pod "+string(rune('0'+n)), func() bool { return len(applyPods(created())) >= n })
		refuse(t, applyPods(created())[n-1].Name)
	}
	eventually(t, "a third try, past the budget of 2", func() bool { return len(applyPods(created())) >= 3 })
	got := waitSkyhook(t, "refused", time.Minute, func(s *skyhookv1.Skyhook) bool {
		for _, a := range s.Status.NodesNeedingAttention {
			if strings.Contains(a.Message, "the kubelet refused the pod: OutOfcpu") && strings.Contains(a.Message, "not a failure of the package") {
				return true
			}
		}
		return false
	})
	if got.Status.Status == skyhookv1.StatusErroring {
		t.Errorf("rollout status %s", got.Status.Status)
	}
	neverErroring(t, history(), "tuning", "1.0.0")
	if entry := packageEntry(t, "refused-0", "refused", "tuning", "1.0.0"); entry.State != skyhookv1.StateInProgress || entry.Restarts != 2 {
		t.Errorf("tuning on refused-0: %+v, want in progress with the refused tries counted", entry)
	}
}

// oneNodeRollout creates a node <name>-0 and a Skyhook <name> with one
// package, tuning 1.0.0, whose stages run for duration; it returns the
// stage pods created for it and the history of its record on the node.
func oneNodeRollout(t *testing.T, name, duration string) (func() []*corev1.Pod, func() []skyhookv1.NodeState) {
	t.Helper()
	return oneNodeRolloutOf(t, name, func(tuning *skyhookv1.Package) {
		tuning.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: duration}}
	})
}

// oneNodeRolloutOf is oneNodeRollout with tuning 1.0.0 as shape makes it.
func oneNodeRolloutOf(t *testing.T, name string, shape func(*skyhookv1.Package)) (func() []*corev1.Pod, func() []skyhookv1.NodeState) {
	t.Helper()
	return oneNodeRolloutOfKind(t, kindCase{rollouts.Skyhooks, ""}, name, shape)
}

// oneNodeRolloutOfKind is oneNodeRolloutOf for a rollout of the kind: its
// node is k.name(base)-0.
func oneNodeRolloutOfKind(t *testing.T, k kindCase, base string, shape func(*skyhookv1.Package)) (func() []*corev1.Pod, func() []skyhookv1.NodeState) {
	t.Helper()
	name := k.name(base)
	createNodes(t, simnode.Numbered(name, 1, map[string]string{"pool": name})...)
	created := stagePodsCreatedOf(t, k.ref(base))
	history := recordHistoryOf(t, name+"-0", k.ref(base))
	tuning := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	shape(&tuning)
	k.create(t, base, skyhookv1.SkyhookSpec{
		NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}},
		Packages:     skyhookv1.Packages{"tuning": tuning},
	})
	return created, history
}

// neverErroring fails the test if any version of the record had the
// package erroring.
func neverErroring(t *testing.T, history []skyhookv1.NodeState, name, version string) {
	t.Helper()
	if len(history) == 0 {
		t.Fatal("no record of the rollout was seen on the node")
	}
	for i, state := range history {
		if e := state[skyhookv1.NodeStateKey(name, version)]; e.State == skyhookv1.StateErroring {
			t.Errorf("record %d of %d has %s erroring: %+v", i+1, len(history), name, e)
		}
	}
}

// refuse writes on the pod what a kubelet writes when it does not admit
// it: Failed, a reason, and no container status. It writes once the
// simulated kubelet has started the pod, so that none of the simulator's
// writes comes after it; the status it writes replaces the simulator's.
func refuse(t *testing.T, name string) {
	t.Helper()
	waitStepRunning(t, name)
	writePodStatus(t, name, "refusing it", func(pod *corev1.Pod) {
		pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "OutOfcpu",
			Message: "Pod was rejected: Node didn't have enough resource: cpu, requested: 64000, used: 500, capacity: 8000"}
	})
}

// waitStepRunning waits until the simulated kubelet runs a step of the
// pod (an init container that takes the stage's time, not a copy or a
// check): until then it has writes of its own in flight, strategic-merge
// patches without a resourceVersion, and one that lands after the test's
// write brings the pod back to Pending and running.
func waitStepRunning(t *testing.T, name string) {
	t.Helper()
	eventually(t, "pod "+name+" running a step", func() bool {
		pod, err := env.Clientset.CoreV1().Pods(operatorNamespace).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, s := range pod.Status.InitContainerStatuses {
			copyOrCheck := s.Name == "copy" || strings.HasSuffix(s.Name, "-init") || strings.HasSuffix(s.Name, "check")
			if s.State.Running != nil && !copyOrCheck {
				return true
			}
		}
		return false
	})
}

// writePodStatus writes the pod's status as change makes it, as its
// kubelet would; the simulated kubelet writes the status too (each init
// container's start and end), so a write that meets one of its own is made
// again on the newer pod.
func writePodStatus(t *testing.T, name, what string, change func(*corev1.Pod)) {
	t.Helper()
	ctx := context.Background()
	pods := env.Clientset.CoreV1().Pods(operatorNamespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(pod)
		_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("pod %s, %s: %v", name, what, err)
	}
}

// applyPods are the apply stage's pods among those created.
func applyPods(pods []*corev1.Pod) []*corev1.Pod { return podsOfStage(pods, skyhookv1.StageApply) }

// podsOfStage are the pods among those created whose (first) stage is
// stage.
func podsOfStage(pods []*corev1.Pod, stage skyhookv1.Stage) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if p.Labels[stagepod.StageLabel] == string(stage) {
			out = append(out, p)
		}
	}
	return out
}

// packageEntry is the package's entry in the rollout's record on the node.
func packageEntry(t *testing.T, node, skyhook, name, version string) skyhookv1.PackageStatus {
	t.Helper()
	return packageEntryOf(t, node, skyhookv1.Skyhooks.Named(skyhook), name, version)
}

// packageEntryOf is the package's entry in the record of a rollout of any
// kind on the node.
func packageEntryOf(t *testing.T, node string, rollout skyhookv1.RolloutRef, name, version string) skyhookv1.PackageStatus {
	t.Helper()
	state, err := nodestate.Read(getNode(t, node), rollout)
	if err != nil {
		t.Fatal(err)
	}
	return state[skyhookv1.NodeStateKey(name, version)]
}
