package cluster_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// A reboot takes the node NotReady and brings it back Ready with the new
// bootID; the request annotations are gone afterwards.
func TestRebootGoesNotReadyThenReadyWithNewBootID(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const node = "worker-07"
	w, err := env.Clientset.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", node).String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	if err := env.Reboot(ctx, node, "boot-07-b", time.Second); err != nil {
		t.Fatal(err)
	}
	sawNotReady := false
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			t.Fatalf("watch error: %v", ev.Object)
		}
		n := ev.Object.(*corev1.Node)
		ready := readyStatus(n)
		if ready == corev1.ConditionFalse {
			sawNotReady = true
			if n.Status.NodeInfo.BootID != "boot-07-a" {
				t.Fatalf("NotReady with bootID %q; the old boot should still be reported", n.Status.NodeInfo.BootID)
			}
		}
		if sawNotReady && ready == corev1.ConditionTrue && n.Status.NodeInfo.BootID == "boot-07-b" {
			if _, left := n.Annotations["sim.skyhook.dev/reboot"]; !left {
				return
			}
		}
	}
	t.Fatalf("no NotReady then Ready with the new bootID and the request removed (saw NotReady: %v): %v", sawNotReady, ctx.Err())
}

func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}
