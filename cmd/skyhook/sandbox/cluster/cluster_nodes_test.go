package cluster_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// Start returns with every node Ready (the node lifecycle controller of the
// real controller-manager has lifted the not-ready taint), carrying the
// labels, taints and bootID the caller chose.
func TestNodesAreReadyWithTheCallersLabelsTaintsAndBootIDs(t *testing.T) {
	list, err := env.Clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*corev1.Node{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	for _, want := range testNodes() {
		got, ok := byName[want.Name]
		if !ok {
			t.Errorf("node %s missing", want.Name)
			continue
		}
		if !simnode.Ready(got) {
			t.Errorf("node %s not Ready: conditions %v, taints %v", want.Name, got.Status.Conditions, got.Spec.Taints)
		}
		if got.Labels["pool"] != want.Labels["pool"] || got.Labels[corev1.LabelHostname] != want.Name {
			t.Errorf("node %s labels = %v", want.Name, got.Labels)
		}
		if got.Status.NodeInfo.BootID != want.BootID {
			t.Errorf("node %s bootID = %q, want %q", want.Name, got.Status.NodeInfo.BootID, want.BootID)
		}
		if !hasTaints(got.Spec.Taints, want.Taints) {
			t.Errorf("node %s taints = %v, want %v", want.Name, got.Spec.Taints, want.Taints)
		}
	}
	if len(byName) != nodeCount {
		t.Errorf("%d nodes, want %d", len(byName), nodeCount)
	}
}

// Nodes can join a running cluster.
func TestNodesJoinLater(t *testing.T) {
	ctx := context.Background()
	if err := env.CreateNodes(ctx, simnode.Node{Name: "late-joiner"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Clientset.CoreV1().Nodes().Delete(ctx, "late-joiner", metav1.DeleteOptions{}) })
	n, err := env.Clientset.CoreV1().Nodes().Get(ctx, "late-joiner", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Status.NodeInfo.BootID == "" {
		t.Error("a node created without a bootID got none; want a random one")
	}
	if info := n.Status.NodeInfo; info.KubeletVersion != simnode.DefaultKubeletVersion || info.ContainerRuntimeVersion != simnode.DefaultContainerRuntime {
		t.Errorf("a node created without versions reports kubelet %q, runtime %q; want %s, %s", info.KubeletVersion, info.ContainerRuntimeVersion,
			simnode.DefaultKubeletVersion, simnode.DefaultContainerRuntime)
	}
}

// A node can report an older kubelet and runtime (one that cannot mount
// image volumes).
func TestNodesReportTheCallersKubeletAndRuntime(t *testing.T) {
	ctx := context.Background()
	old := simnode.Node{Name: "old-runtime", KubeletVersion: "v1.34.2", ContainerRuntime: "containerd://1.7.27"}
	if err := env.CreateNodes(ctx, old); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Clientset.CoreV1().Nodes().Delete(ctx, old.Name, metav1.DeleteOptions{}) })
	n, err := env.Clientset.CoreV1().Nodes().Get(ctx, old.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info := n.Status.NodeInfo; info.KubeletVersion != old.KubeletVersion || info.ContainerRuntimeVersion != old.ContainerRuntime {
		t.Errorf("node reports kubelet %q, runtime %q; want %s, %s", info.KubeletVersion, info.ContainerRuntimeVersion, old.KubeletVersion, old.ContainerRuntime)
	}
}

func hasTaints(got, want []corev1.Taint) bool {
	for _, w := range want {
		found := false
		for _, g := range got {
			if g.Key == w.Key && g.Value == w.Value && g.Effect == w.Effect {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
