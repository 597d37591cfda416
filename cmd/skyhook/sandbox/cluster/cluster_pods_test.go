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
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
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
	return waitPodIn(t, env, name, done)
}

// waitPodIn is waitPod in cluster c.
func waitPodIn(t *testing.T, c *cluster.Cluster, name string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := c.Clientset.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
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
	createPod(t, stagePod("stage-ok", corev1.RestartPolicyNever, "ghcr.io/skyhook/pkg:1.0.0", env2(simnode.DurationEnv, "3s")))
	pod := waitPod(t, "stage-ok", func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodPending })

	if pod.Status.Phase != corev1.PodRunning || !podutils.IsPodReady(pod) {
		t.Fatalf("phase %s, ready %v; want Running and Ready", pod.Status.Phase, podutils.IsPodReady(pod))
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

// TestEachStageOfAPodTakesItsOwnTime runs a pod of four stages, each a
// package copy, the stage and its check, as a pod that holds several
// stages is built: the containers run one at a time, each stage after its
// own SKYHOOK_SIM_DURATION, the copies and checks at once; while a stage
// runs, the stages before it have ended and the ones after it wait.
func TestEachStageOfAPodTakesItsOwnTime(t *testing.T) {
	const stages = 4
	stageTime := env2(simnode.DurationEnv, "1500ms")
	pod := stagePod("four-stages", corev1.RestartPolicyNever, "ghcr.io/skyhook/pkg:1.0.0")
	pod.Spec.InitContainers = nil
	for i := range stages {
		pkg := fmt.Sprintf("pkg%d", i)
		pod.Spec.InitContainers = append(pod.Spec.InitContainers,
			corev1.Container{Name: pkg + "-init", Image: "ghcr.io/skyhook/pkg:1.0.0"},
			corev1.Container{Name: pkg + "-apply", Image: "ghcr.io/skyhook/agent:1.0.0", Env: []corev1.EnvVar{stageTime}},
			corev1.Container{Name: pkg + "-applycheck", Image: "ghcr.io/skyhook/agent:1.0.0", Env: []corev1.EnvVar{stageTime}})
	}
	created := time.Now()
	createPod(t, pod)

	// Mid-run: the second stage runs, the first has ended, the rest wait.
	mid := waitPod(t, pod.Name, func(p *corev1.Pod) bool {
		return len(p.Status.InitContainerStatuses) == 3*stages && p.Status.InitContainerStatuses[4].State.Running != nil
	})
	for i, s := range mid.Status.InitContainerStatuses {
		switch {
		case i < 4 && (s.State.Terminated == nil || s.State.Terminated.ExitCode != 0):
			t.Errorf("while pkg1-apply runs, %s: %+v; want ended with 0", s.Name, s.State)
		case i > 4 && (s.State.Waiting == nil || s.State.Waiting.Reason != "PodInitializing"):
			t.Errorf("while pkg1-apply runs, %s: %+v; want waiting", s.Name, s.State)
		}
	}
	if mid.Status.Phase != corev1.PodPending {
		t.Errorf("mid-run phase %s, want Pending", mid.Status.Phase)
	}

	done := waitPod(t, pod.Name, func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodPending })
	if done.Status.Phase != corev1.PodRunning {
		t.Fatalf("phase %s, want Running", done.Status.Phase)
	}
	// Status times have one-second resolution: four stages of 1.5 s end
	// no sooner than 5 s after the pod was created (one stage time would
	// be 1 s), each stage no sooner than 1 s after the one before.
	if d := finishedAfter(done, created); d < 5*time.Second {
		t.Errorf("four stages of 1.5 s ended %s after the pod's creation; want at least 5 s", d)
	}
	var previous time.Time
	for i := range stages {
		apply := done.Status.InitContainerStatuses[3*i+1].State.Terminated
		if apply == nil {
			t.Fatalf("stage %d did not end: %+v", i, done.Status.InitContainerStatuses[3*i+1].State)
		}
		if i > 0 && apply.FinishedAt.Sub(previous) < time.Second {
			t.Errorf("stage %d ended %s after stage %d; want its own 1.5 s", i, apply.FinishedAt.Sub(previous), i-1)
		}
		previous = apply.FinishedAt.Time
	}
}

func TestStagePodFailsWithTheChosenExitCode(t *testing.T) {
	createPod(t, stagePod("stage-fail", corev1.RestartPolicyNever, "ghcr.io/skyhook/pkg:1.0.0", env2(simnode.ExitCodeEnv, "3")))
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
		env2(simnode.ExitCodeEnv, "3"), env2(simnode.ExitNodesEnv, "worker-011,worker-02"))
	here := stagePod("stage-fail-here", corev1.RestartPolicyNever, "ghcr.io/skyhook/pkg:1.0.0",
		env2(simnode.ExitCodeEnv, "3"), env2(simnode.ExitNodesEnv, "worker-02,worker-01"))
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
	createPod(t, stagePod("stage-crash", corev1.RestartPolicyOnFailure, "ghcr.io/skyhook/pkg:1.0.0", env2(simnode.ExitCodeEnv, "42")))
	pod := waitPod(t, "stage-crash", func(p *corev1.Pod) bool {
		return len(p.Status.InitContainerStatuses) == 2 && p.Status.InitContainerStatuses[1].State.Running == nil && p.Status.InitContainerStatuses[1].LastTerminationState.Terminated != nil
	})

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

// agentlessPod is a stage pod whose stage and check containers carry a
// NodeWright package's env (its test image sleeps SLEEP_LEN, exits EXIT_CODE).
func agentlessPod(name string, stageEnv, checkEnv []corev1.EnvVar) *corev1.Pod {
	pod := stagePod(name, corev1.RestartPolicyNever, "ghcr.io/skyhook/pkg:1.0.0", stageEnv...)
	pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: "check", Image: "ghcr.io/skyhook/agent:1.0.0", Env: checkEnv})
	return pod
}

// finishedAfter is how long after created the pod's last run init container
// finished (status times have one-second resolution).
func finishedAfter(pod *corev1.Pod, created time.Time) time.Duration {
	var last time.Time
	for _, s := range pod.Status.InitContainerStatuses {
		if s.State.Terminated != nil && s.State.Terminated.FinishedAt.After(last) {
			last = s.State.Terminated.FinishedAt.Time
		}
	}
	return last.Sub(created.Truncate(time.Second))
}

func TestAgentlessExitCodeFailsTheContainer(t *testing.T) {
	createPod(t, agentlessPod("agentless-fail", []corev1.EnvVar{env2(simnode.AgentlessExitCodeEnv, "2")}, nil))
	pod := waitPod(t, "agentless-fail", func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodPending })
	if pod.Status.Phase != corev1.PodFailed {
		t.Fatalf("phase %s, want Failed", pod.Status.Phase)
	}
	if s := pod.Status.InitContainerStatuses[1].State.Terminated; s == nil || s.ExitCode != 2 {
		t.Errorf("agent: %+v, want terminated with 2", pod.Status.InitContainerStatuses[1].State)
	}
	if w := pod.Status.InitContainerStatuses[2].State.Waiting; w == nil {
		t.Errorf("check: %+v, want waiting: it never runs", pod.Status.InitContainerStatuses[2].State)
	}
}

func TestSimExitCodeWinsOverAgentlessExitCode(t *testing.T) {
	createPod(t, agentlessPod("agentless-overridden", []corev1.EnvVar{env2(simnode.AgentlessExitCodeEnv, "2"), env2(simnode.ExitCodeEnv, "0")}, nil))
	pod := waitPod(t, "agentless-overridden", func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodPending })
	if pod.Status.Phase != corev1.PodRunning {
		t.Fatalf("phase %s, want Running: %s=0 wins over %s", pod.Status.Phase, simnode.ExitCodeEnv, simnode.AgentlessExitCodeEnv)
	}
}

func TestAgentlessSleepIsATenthPerContainerThatRuns(t *testing.T) {
	sleep := env2(simnode.AgentlessSleepEnv, "15") // 1.5 s per container
	created := time.Now()
	createPod(t, agentlessPod("agentless-sleep", []corev1.EnvVar{sleep}, []corev1.EnvVar{sleep}))
	// A first container that fails stops the clock: the check's 60 s never run.
	createPod(t, agentlessPod("agentless-sleep-fail", []corev1.EnvVar{sleep, env2(simnode.AgentlessExitCodeEnv, "1")}, []corev1.EnvVar{env2(simnode.AgentlessSleepEnv, "600")}))
	// The project's duration wins over SLEEP_LEN.
	createPod(t, agentlessPod("agentless-sleep-overridden", []corev1.EnvVar{env2(simnode.AgentlessSleepEnv, "600"), env2(simnode.DurationEnv, "100ms")}, nil))

	ok := waitPod(t, "agentless-sleep", func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodPending })
	if d := finishedAfter(ok, created); ok.Status.Phase != corev1.PodRunning || d < 2*time.Second || d > 5*time.Second {
		t.Errorf("two containers of SLEEP_LEN 15: phase %s after %s; want Running after 3 s", ok.Status.Phase, d)
	}
	failed := waitPod(t, "agentless-sleep-fail", func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodPending })
	if d := finishedAfter(failed, created); failed.Status.Phase != corev1.PodFailed || d > 4*time.Second {
		t.Errorf("failing first container of SLEEP_LEN 15: phase %s after %s; want Failed after 1.5 s", failed.Status.Phase, d)
	}
	overridden := waitPod(t, "agentless-sleep-overridden", func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodPending })
	if d := finishedAfter(overridden, created); overridden.Status.Phase != corev1.PodRunning || d > 4*time.Second {
		t.Errorf("SLEEP_LEN 600 with %s 100ms: phase %s after %s; want Running at once", simnode.DurationEnv, overridden.Status.Phase, d)
	}
}

func TestStagePodImagePullFailure(t *testing.T) {
	image := simnode.InvalidRegistry + "/skyhook/pkg:1.0.0"
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
	if !podutils.IsPodReady(got) || got.Status.PodIP == "" {
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
