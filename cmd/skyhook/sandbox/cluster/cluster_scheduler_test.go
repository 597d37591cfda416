package cluster_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// With Options.Scheduler a pod that names no node is placed by
// kube-scheduler on a node its selector and tolerations allow, and KWOK
// runs it there; a pod no node allows stays Pending, unschedulable.
func TestSchedulerPlacesWorkloadsOnSimulatedNodes(t *testing.T) {
	ctx := context.Background()
	gpu := map[string]string{"pool": "gpu"}
	c, err := cluster.Start(ctx, cluster.Options{Scheduler: true, Nodes: []simnode.Node{
		{Name: "cpu-0", Labels: map[string]string{"pool": "cpu"}},
		{Name: "gpu-0", Labels: gpu},
		{Name: "gpu-tainted", Labels: gpu, Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	if c.Processes()["kube-scheduler"] == 0 {
		t.Fatalf("kube-scheduler is not running: %v", c.Processes())
	}
	pods := c.Clientset.CoreV1().Pods("default")
	workload := func(name string, selector map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{NodeSelector: selector, Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1"}}}}
	}
	for _, p := range []*corev1.Pod{workload("training", gpu), workload("nowhere", map[string]string{"pool": "none"})} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	placed := &corev1.Pod{}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := pods.Get(ctx, "training", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		placed = got
		return placed.Status.Phase == corev1.PodRunning, nil
	}); err != nil {
		t.Fatalf("the workload did not run: %v; node %q, status %+v", err, placed.Spec.NodeName, placed.Status)
	}
	if placed.Spec.NodeName != "gpu-0" {
		t.Errorf("the workload runs on %q, want gpu-0 (the only gpu node it tolerates)", placed.Spec.NodeName)
	}

	stuck := &corev1.Pod{}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := pods.Get(ctx, "nowhere", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		stuck = got
		for _, cond := range stuck.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("a pod no node allows was not reported unschedulable: %v; status %+v", err, stuck.Status)
	}
	if stuck.Spec.NodeName != "" {
		t.Errorf("a pod no node allows was placed on %q", stuck.Spec.NodeName)
	}
}
