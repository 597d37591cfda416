package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// With two KWOK shards every node is Ready, each shard's nodes advertise
// that shard's kubelet API port, and a pod's log on a node of the second
// shard travels through the apiserver to the second KWOK. The heartbeat
// is slowed and the grace period follows it.
func TestShardedKWOK(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	scale := cluster.Scale{KWOKShards: 2, KWOKParallelism: 8, HeartbeatInterval: 2 * time.Minute, LargeControlPlane: true}
	c, err := cluster.Start(ctx, cluster.Options{Scale: scale, Nodes: simnode.Numbered("shard", 8, nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	procs := c.Processes()
	if procs["kwok"] == 0 || procs["kwok-1"] == 0 || !cluster.IsSimulator("kwok-1") {
		t.Fatalf("want two KWOK processes, running: %v", procs)
	}

	nodes, err := c.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]int32{} // shard → port
	var second string
	for i := range nodes.Items {
		n := &nodes.Items[i]
		shard := n.Labels[simnode.ShardLabel]
		if shard != "0" && shard != "1" {
			t.Errorf("node %s shard label %q", n.Name, shard)
		}
		if !simnode.Ready(n) {
			t.Errorf("node %s (shard %s) not Ready", n.Name, shard)
		}
		port := n.Status.DaemonEndpoints.KubeletEndpoint.Port
		if p, seen := ports[shard]; seen && p != port {
			t.Errorf("shard %s nodes advertise ports %d and %d", shard, p, port)
		}
		ports[shard] = port
		if shard == "1" {
			second = n.Name
		}
	}
	if len(ports) != 2 || ports["0"] == ports["1"] {
		t.Fatalf("want two shards with their own port, got %v", ports)
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "on-second-shard", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:   second,
			Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if _, err := c.Clientset.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := c.Clientset.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("pod on %s (shard 1) not Running: %v", second, err)
	}
	if err := c.WriteContainerLog(ctx, "default", pod.Name, "main", "from shard 1"); err != nil {
		t.Fatal(err)
	}
	raw, err := c.Clientset.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	if err != nil || string(raw) != "from shard 1\n" {
		t.Errorf("log through the apiserver = %q (%v), want %q", raw, err, "from shard 1\n")
	}

	out, err := c.Kubectl("get", "stage", "skyhook-sim-node-heartbeat", "-o", "jsonpath={.spec.delay.durationMilliseconds}")
	if err != nil || strings.TrimSpace(out) != "120000" {
		t.Errorf("heartbeat delay = %q (%v), want 120000", out, err)
	}
	if !strings.Contains(scale.String(), "node-monitor-grace-period 10m0s") {
		t.Errorf("grace period not five heartbeats: %s", scale)
	}
}

// ScaleFor leaves small clusters as they are, gives one KWOK per 2,500
// nodes and slows the heartbeat from 5,000.
func TestScaleFor(t *testing.T) {
	if s := cluster.ScaleFor(100); s != (cluster.Scale{}) {
		t.Errorf("ScaleFor(100) = %+v, want the zero Scale", s)
	}
	for nodes, want := range map[int]struct {
		shards    int
		heartbeat time.Duration
	}{1000: {1, time.Minute}, 2500: {1, time.Minute}, 5000: {2, 2 * time.Minute}, 10000: {4, 2 * time.Minute}} {
		if s := cluster.ScaleFor(nodes); s.KWOKShards != want.shards || s.HeartbeatInterval != want.heartbeat || !s.LargeControlPlane {
			t.Errorf("ScaleFor(%d) = %+v, want %d shards, %s heartbeat, large control plane", nodes, s, want.shards, want.heartbeat)
		}
	}
}
