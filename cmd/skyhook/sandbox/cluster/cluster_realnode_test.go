package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// TestRealNodeRunsPodsAndLeavesNothingBehind adds a real node to a cluster
// of its own: it registers with the real kubelet's version and the
// loopback address, KWOK leaves it alone, a privileged host-network pod
// writes on the host and its log comes back through the apiserver; after
// Stop no process the node started runs and nothing stays mounted.
func TestRealNodeRunsPodsAndLeavesNothingBehind(t *testing.T) {
	if err := kubeletnode.Supported(); err != nil {
		t.Skipf("no real node on this machine: %v", err)
	}
	ctx := context.Background()
	pause := pushPause(t)
	c, err := cluster.Start(ctx, cluster.Options{Nodes: []simnode.Node{{Name: "simulated"}}})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			c.Stop()
		}
	}()
	n, err := c.AddRealNode(ctx, kubeletnode.Options{Name: "metal", PauseImage: pause.ref, Registries: []string{pause.registry}})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("registers as itself", func(t *testing.T) {
		time.Sleep(3 * time.Second) // a status update or two, by the kubelet and KWOK if it meddled
		node, err := c.Clientset.CoreV1().Nodes().Get(ctx, "metal", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v := node.Status.NodeInfo.KubeletVersion; v != binaries.KubeletVersion {
			t.Errorf("kubeletVersion = %q, want the real kubelet's %s", v, binaries.KubeletVersion)
		}
		if node.Labels[kubeletnode.Label] != kubeletnode.LabelValue {
			t.Errorf("labels = %v, want %s=%s", node.Labels, kubeletnode.Label, kubeletnode.LabelValue)
		}
		if len(node.Status.Addresses) == 0 || node.Status.Addresses[0].Address != "127.0.0.1" {
			t.Errorf("addresses = %v, want InternalIP 127.0.0.1", node.Status.Addresses)
		}
		sim, err := c.Clientset.CoreV1().Nodes().Get(ctx, "simulated", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sim.Status.NodeInfo.KubeletVersion == binaries.KubeletVersion {
			t.Errorf("the simulated node reports the real kubelet's version")
		}
	})

	hostDir := t.TempDir()
	// The lingering container's command line, unusual enough to find.
	const marker = "sleep 7321"
	t.Run("runs a privileged host pod", func(t *testing.T) {
		privileged := true
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "writer", Namespace: "default"}, Spec: corev1.PodSpec{
			NodeName: "metal", RestartPolicy: corev1.RestartPolicyNever, HostNetwork: true, HostPID: true,
			InitContainers: []corev1.Container{{Name: "write", Image: pause.ref, Command: []string{"/bin/sh", "-c",
				"echo written-by-a-real-container > /host" + hostDir + "/proof && echo hello from the real node"},
				SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
				VolumeMounts:    []corev1.VolumeMount{{Name: "host", MountPath: "/host"}}}},
			// Still running at Stop, which must end it.
			Containers: []corev1.Container{{Name: "linger", Image: pause.ref, Command: []string{"/bin/sh", "-c", "exec " + marker}}},
			Volumes:    []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}},
		}}
		if _, err := c.Clientset.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			p, err := c.Clientset.CoreV1().Pods("default").Get(ctx, "writer", metav1.GetOptions{})
			if err == nil && p.Status.Phase == corev1.PodRunning {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the pod did not run: %+v\n%s", p.Status, proc.TailFile(n.KubeletLog, 20))
			}
			time.Sleep(300 * time.Millisecond)
		}
		data, err := os.ReadFile(filepath.Join(hostDir, "proof"))
		if err != nil || string(data) != "written-by-a-real-container\n" {
			t.Errorf("on the host: %q, %v", data, err)
		}
		logs, err := c.Clientset.CoreV1().Pods("default").GetLogs("writer", &corev1.PodLogOptions{Container: "write"}).DoRaw(ctx)
		if err != nil || string(logs) != "hello from the real node\n" {
			t.Errorf("logs through the apiserver: %q, %v", logs, err)
		}
	})

	c.Stop()
	stopped = true
	if left := proc.Naming(marker, c.Dir); len(left) > 0 {
		t.Errorf("still running after Stop: %v", left)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mounts), c.Dir) {
		t.Errorf("still mounted under %s after Stop", c.Dir)
	}
}

// pushedPause is the pause image pushed to a registry of the test's own.
type pushedPause struct{ ref, registry string }

// pushPause builds the pause image (busybox, its applets runnable as
// /bin/busybox APPLET) and pushes it to a registry that lives as long as
// the test.
func pushPause(t *testing.T) pushedPause {
	t.Helper()
	ctx := context.Background()
	busybox, err := nodeimages.Busybox(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	pause, err := nodeimages.Pause(busybox)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := nodeimages.StartRegistry(nodeimages.RegistryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	ref, err := reg.Push(ctx, "pause:test", pause)
	if err != nil {
		t.Fatal(err)
	}
	return pushedPause{ref: ref, registry: reg.Host()}
}
