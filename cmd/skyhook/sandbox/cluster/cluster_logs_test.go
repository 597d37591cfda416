package cluster_test

import (
	"bufio"
	"context"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// A container's log travels the real path: the apiserver proxies
// pods/log to the kubelet API (KWOK's) on the node's address.
func TestContainerLogsAreServedThroughTheAPIServer(t *testing.T) {
	ctx := context.Background()
	createPod(t, stagePod("logs-once", corev1.RestartPolicyNever, "ghcr.io/skyhook/pkg:1.0.0"))
	if err := env.WriteContainerLog(ctx, "default", "logs-once", "agent", "first line", "second line"); err != nil {
		t.Fatal(err)
	}
	if err := env.WriteContainerLog(ctx, "default", "logs-once", "copy", "copied"); err != nil {
		t.Fatal(err)
	}
	for container, want := range map[string]string{"agent": "first line\nsecond line\n", "copy": "copied\n"} {
		raw, err := env.Clientset.CoreV1().Pods("default").GetLogs("logs-once", &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
		if err != nil {
			t.Fatalf("logs of %s: %v", container, err)
		}
		if string(raw) != want {
			t.Errorf("logs of %s = %q, want %q", container, raw, want)
		}
	}
	if _, err := env.Clientset.CoreV1().Pods("default").GetLogs("logs-once", &corev1.PodLogOptions{Container: "pause"}).DoRaw(ctx); err == nil {
		t.Error("a container that printed nothing has logs; want an error from the kubelet")
	}
}

func TestFollowedContainerLogsShowNewLines(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createPod(t, stagePod("logs-follow", corev1.RestartPolicyNever, "ghcr.io/skyhook/pkg:1.0.0"))
	if err := env.WriteContainerLog(ctx, "default", "logs-follow", "agent", "before"); err != nil {
		t.Fatal(err)
	}
	stream, err := env.Clientset.CoreV1().Pods("default").GetLogs("logs-follow", &corev1.PodLogOptions{Container: "agent", Follow: true}).Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	lines := bufio.NewReader(stream)
	if got := readLine(t, lines); got != "before" {
		t.Fatalf("first line %q, want before", got)
	}
	if err := env.WriteContainerLog(ctx, "default", "logs-follow", "agent", "after"); err != nil {
		t.Fatal(err)
	}
	if got := readLine(t, lines); got != "after" {
		t.Fatalf("followed line %q, want after", got)
	}
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return line[:max(len(line)-1, 0)]
}

// In the sandbox every stage pod's container gets a log saying what would
// have run, once it has run.
func TestSimulatedStagePodLogs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pod := stagePod("logs-simulated", corev1.RestartPolicyNever, "ghcr.io/skyhook/pkg:1.0.0", env2(simnode.ExitCodeEnv, "3"))
	pod.Labels = map[string]string{simnode.StagePodSelector: "apply"}
	pod.Spec.InitContainers[1].Args = []string{"apply", "/root", "/root/var/lib/skyhook/pkg"}
	createPod(t, pod)
	env.SimulateContainerLogs(ctx)
	want := map[string]string{
		"copy":  "[simulated by KWOK] copy ran ghcr.io/skyhook/pkg:1.0.0\n[simulated by KWOK] copy exited 0\n",
		"agent": "[simulated by KWOK] agent ran ghcr.io/skyhook/agent:1.0.0 apply /root /root/var/lib/skyhook/pkg\n[simulated by KWOK] agent exited 3\n",
	}
	for container, text := range want {
		var got []byte
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			raw, err := env.Clientset.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
			got = raw
			return err == nil, nil
		})
		if err != nil || string(got) != text {
			t.Errorf("simulated log of %s = %q (%v), want %q", container, got, err, text)
		}
	}
}
