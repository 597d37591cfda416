package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
)

// stagePod is shaped like a Skyhook stage pod: init containers that copy the
// package and run the agent, then a pause container.
func stagePod(name string, restart corev1.RestartPolicy, copyImage string, agentEnv ...corev1.EnvVar) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:      "worker-01",
			RestartPolicy: restart,
			InitContainers: []corev1.Container{
				{Name: "copy", Image: copyImage},
				{Name: "agent", Image: "ghcr.io/skyhook/agent:1.0.0", Env: agentEnv},
			},
			Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

func env2(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }

func createPod(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	if _, err := env.Clientset.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Clientset.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
	})
}

// waitPod polls the pod until done returns true.
func waitPod(t *testing.T, name string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := env.Clientset.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		return done(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s: %v; last status: %+v", name, err, pod.Status)
	}
	return pod
}

func TestStagePodCompletesAfterTheChosenDelay(t *testing.T) {
	created := time.Now()
	createPod(t, stagePod("stage-ok", corev1.RestartPolicyNever, "ghcr.io/skyhook/pkg:1.0.0", env2(cluster.SimDurationEnv, "3s")))
	pod := waitPod(t, "stage-ok", func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodPending })

	if pod.Status.Phase != corev1.PodRunning || !podReady(pod) {
		t.Fatalf("phase %s, ready %v; want Running and Ready", pod.Status.Phase, podReady(pod))
	}
	for _, s := range pod.Status.InitContainerStatuses {
		if s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 {
			t.Fatalf("init container %s: %+v, want terminated with 0", s.Name, s.State)
		}
	}
	// Status times have one-second resolution.
	finished := pod.Status.InitContainerStatuses[1].State.Terminated.FinishedAt.Time
	if finished.Before(created.Add(2 * time.Second)) {
		t.Fatalf("finished %s after creation; want the 3s delay", finished.Sub(created))
	}
}

func TestStagePodFailsWithTheChosenExitCode(t *testing.T) {
	createPod(t, stagePod("stage-fail", corev1.RestartPolicyNever, "ghcr.io/skyhook/pkg:1.0.0", env2(cluster.SimExitCodeEnv, "3")))
	pod := waitPod(t, "stage-fail", func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodPending })

	if pod.Status.Phase != corev1.PodFailed {
		t.Fatalf("phase %s, want Failed", pod.Status.Phase)
	}
	copyStatus, agent := pod.Status.InitContainerStatuses[0], pod.Status.InitContainerStatuses[1]
	if copyStatus.State.Terminated == nil || copyStatus.State.Terminated.ExitCode != 0 {
		t.Errorf("copy: %+v, want terminated with 0", copyStatus.State)
	}
	if agent.State.Terminated == nil || agent.State.Terminated.ExitCode != 3 || agent.State.Terminated.Reason != "Error" {
		t.Errorf("agent: %+v, want terminated with 3", agent.State)
	}
	if w := pod.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Errorf("pause: %+v, want waiting for initialisation", pod.Status.ContainerStatuses[0].State)
	}
}

func TestStagePodFailsOnlyOnTheListedNodes(t *testing.T) {
	elsewhere := stagePod("stage-fail-elsewhere", corev1.RestartPolicyNever, "ghcr.io/skyhook/pkg:1.0.0",
		env2(cluster.SimExitCodeEnv, "3"), env2(cluster.SimExitNodesEnv, "worker-011,worker-02"))
	here := stagePod("stage-fail-here", corev1.RestartPolicyNever, "ghcr.io/skyhook/pkg:1.0.0",
		env2(cluster.SimExitCodeEnv, "3"), env2(cluster.SimExitNodesEnv, "worker-02,worker-01"))
	createPod(t, elsewhere)
	createPod(t, here)
	if p := waitPod(t, elsewhere.Name, func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodPending }); p.Status.Phase != corev1.PodRunning {
		t.Errorf("on a node not listed (only a longer name sharing its prefix is): phase %s, want Running", p.Status.Phase)
	}
	if p := waitPod(t, here.Name, func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodPending }); p.Status.Phase != corev1.PodFailed {
		t.Errorf("on a listed node: phase %s, want Failed", p.Status.Phase)
	}
}

func TestStagePodWithRestartsBacksOffWithTheExitCode(t *testing.T) {
	createPod(t, stagePod("stage-crash", corev1.RestartPolicyOnFailure, "ghcr.io/skyhook/pkg:1.0.0", env2(cluster.SimExitCodeEnv, "42")))
	pod := waitPod(t, "stage-crash", func(p *corev1.Pod) bool { return len(p.Status.InitContainerStatuses) == 2 })

	agent := pod.Status.InitContainerStatuses[1]
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("phase %s, want Pending", pod.Status.Phase)
	}
	if agent.State.Waiting == nil || agent.State.Waiting.Reason != "CrashLoopBackOff" {
		t.Errorf("agent state %+v, want CrashLoopBackOff", agent.State)
	}
	if agent.LastTerminationState.Terminated == nil || agent.LastTerminationState.Terminated.ExitCode != 42 || agent.RestartCount != 1 {
		t.Errorf("agent last state %+v, restarts %d; want exit code 42 after one restart", agent.LastTerminationState, agent.RestartCount)
	}
}

func TestStagePodImagePullFailure(t *testing.T) {
	image := cluster.InvalidRegistry + "/skyhook/pkg:1.0.0"
	createPod(t, stagePod("stage-pull", corev1.RestartPolicyNever, image))
	pod := waitPod(t, "stage-pull", func(p *corev1.Pod) bool { return len(p.Status.InitContainerStatuses) == 2 })

	copyStatus := pod.Status.InitContainerStatuses[0]
	if w := copyStatus.State.Waiting; w == nil || w.Reason != "ErrImagePull" || !strings.Contains(w.Message, image) {
		t.Fatalf("copy: %+v, want ErrImagePull naming %s", copyStatus.State, image)
	}
	if w := pod.Status.InitContainerStatuses[1].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Errorf("agent: %+v, want waiting behind the copy", pod.Status.InitContainerStatuses[1].State)
	}
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("phase %s, want Pending", pod.Status.Phase)
	}
}

func TestPlainPodRunsAndIsDeleted(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "workload", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:   "worker-02",
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	createPod(t, pod)
	got := waitPod(t, "workload", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if !podReady(got) || got.Status.PodIP == "" {
		t.Fatalf("running pod not Ready or without an IP: %+v", got.Status)
	}
	if err := env.Clientset.CoreV1().Pods("default").Delete(ctx, "workload", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := env.Clientset.CoreV1().Pods("default").Get(ctx, "workload", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatal(fmt.Errorf("deleted pod still there: %w", err))
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
