package reconcile_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// interruptStageTime is how long each stage of these tests' package runs:
// long enough for the test to act on an interrupt pod while it runs.
const interruptStageTime = "8s"

// An interrupt pod that ran nothing of the packages is no failure of
// theirs, as a stage pod's is not: evicted, it runs again as the same try;
// refused by its kubelet, it spends a try but the node is never erroring;
// the interrupt then runs and the packages complete.
func TestInterruptPodTakenAwayOrRefusedIsNoFailure(t *testing.T) {
	eachKind(t, func(t *testing.T, k kindCase) {
		created, history := oneNodeRolloutOfKind(t, k, "intnotrun", func(p *skyhookv1.Package) {
			p.Interrupt = &skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: []string{"containerd"}}
			p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: interruptStageTime}}
		})
		first := nthInterruptPod(t, created, 1)
		if err := env.Clientset.CoreV1().Pods(operatorNamespace).EvictV1(context.Background(), &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Name: first.Name, Namespace: operatorNamespace}}); err != nil {
			t.Fatalf("evicting %s: %v", first.Name, err)
		}
		refuse(t, nthInterruptPod(t, created, 2).Name)
		k.wait(t, "intnotrun", 2*time.Minute, isReady)

		pods := interruptPods(created())
		var attempts []string
		for _, p := range pods {
			attempts = append(attempts, p.Annotations[stagepod.AttemptAnnotation])
		}
		if len(pods) != 3 || attempts[0] != "0" || attempts[1] != "0" || attempts[2] != "1" {
			t.Errorf("interrupt pods' tries %v, want 0 (evicted), 0 (its rerun, refused), 1 (after the refusal)", attempts)
		}
		neverErroring(t, history(), "tuning", "1.0.0")
		node := k.name("intnotrun") + "-0"
		if entry := packageEntryOf(t, node, k.ref("intnotrun"), "tuning", "1.0.0"); entry.State != skyhookv1.StateComplete || entry.Stage != skyhookv1.StagePostInterrupt {
			t.Errorf("tuning on %s: %+v, want post-interrupt complete", node, entry)
		}
	})
}

// A reboot's pod is stopped by the reboot it asked for when the kubelet
// shuts the node down gracefully. That is the reboot under way: it is
// verified (the node back Ready with a new boot ID), not asked for again,
// so the node reboots once.
func TestRebootThatStopsItsOwnPodIsVerifiedNotRunAgain(t *testing.T) {
	eachKind(t, func(t *testing.T, k kindCase) {
		created, history := oneNodeRolloutOfKind(t, k, "rebootstop", func(p *skyhookv1.Package) {
			p.Interrupt = &skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}
			p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: interruptStageTime}}
		})
		pod := nthInterruptPod(t, created, 1)
		node := k.name("rebootstop") + "-0"
		// What a node shutting down does: its kubelet stops the pod and
		// writes so, then the node goes down and comes back with a new boot ID.
		if err := env.Reboot(context.Background(), node, "boot-after-shutdown", 3*time.Second); err != nil {
			t.Fatal(err)
		}
		writePodStatus(t, pod.Name, "stopping it for the node's shutdown", func(p *corev1.Pod) {
			if !p.Status.StartTime.IsZero() && stagepod.Read(p).Result != stagepod.Running {
				t.Fatalf("the interrupt pod ended (%v) before the test stopped it: make interruptStageTime longer", stagepod.Read(p).Result)
			}
			p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Terminated", "Pod was terminated in response to imminent node shutdown."
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: corev1.PodReasonTerminationByKubelet, Message: "Pod was terminated in response to imminent node shutdown.", LastTransitionTime: metav1.Now()})
		})
		k.wait(t, "rebootstop", 2*time.Minute, isReady)

		if n := len(interruptPods(created())); n != 1 {
			t.Errorf("%d interrupt pods, want 1: the reboot was asked for again", n)
		}
		if boot := getNode(t, node).Status.NodeInfo.BootID; boot != "boot-after-shutdown" {
			t.Errorf("boot ID %q, want the one reboot's boot-after-shutdown", boot)
		}
		neverErroring(t, history(), "tuning", "1.0.0")
		if entry := packageEntryOf(t, node, k.ref("rebootstop"), "tuning", "1.0.0"); entry.State != skyhookv1.StateComplete || entry.Stage != skyhookv1.StagePostInterrupt {
			t.Errorf("tuning on %s: %+v, want post-interrupt complete", node, entry)
		}
	})
}

// nthInterruptPod waits for the n-th interrupt pod created (from 1).
func nthInterruptPod(t *testing.T, created func() []*corev1.Pod, n int) *corev1.Pod {
	t.Helper()
	eventually(t, "interrupt pod "+string(rune('0'+n)), func() bool { return len(interruptPods(created())) >= n })
	return interruptPods(created())[n-1]
}

// interruptPods are the interrupt stage's pods among those created.
func interruptPods(pods []*corev1.Pod) []*corev1.Pod {
	return podsOfStage(pods, skyhookv1.StageInterrupt)
}
