package imagevolume

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNodeSupports(t *testing.T) {
	for _, c := range []struct {
		kubelet, runtime string
		want             bool
		why              string
	}{
		{"v1.36.3", "containerd://2.2.9", true, ""},
		{"v1.35.0", "containerd://2.1.0", true, ""},
		{"v1.35.4-eks-1a2b3c", "cri-o://1.31.2", true, ""},
		{"v1.34.9", "containerd://2.2.9", false, "kubelet v1.34.9"},
		{"v1.35.4", "containerd://1.6.20", false, "containerd 2.1.0 or later"},
		{"v1.35.4", "containerd://2.1.0-rc.1", false, "containerd 2.1.0 or later"},
		{"v1.35.4", "cri-o://1.30.9", false, "cri-o 1.31.0 or later"},
		{"v1.36.3", "docker://28.2.2", false, "docker://28.2.2"},
		{"v0.8.0", "kwok://v0.8.0", false, "kubelet v0.8.0"},
		{"", "", false, "kubelet (not reported)"},
		{"v1.36.3", "containerd://garbage", false, "containerd://garbage"},
	} {
		node := &corev1.Node{Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: c.kubelet, ContainerRuntimeVersion: c.runtime}}}
		got, why := NodeSupports(node)
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("kubelet %q, runtime %q: %v (%q); want %v, a reason with %q", c.kubelet, c.runtime, got, why, c.want, c.why)
		}
	}
}
