package cluster_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

	placed := waitPodIn(t, c, "training", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if placed.Spec.NodeName != "gpu-0" {
		t.Errorf("the workload runs on %q, want gpu-0 (the only gpu node it tolerates)", placed.Spec.NodeName)
	}
	stuck := waitPodIn(t, c, "nowhere", func(p *corev1.Pod) bool {
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
				return true
			}
		}
		return false
	})
	if stuck.Spec.NodeName != "" {
		t.Errorf("a pod no node allows was placed on %q", stuck.Spec.NodeName)
	}
}
