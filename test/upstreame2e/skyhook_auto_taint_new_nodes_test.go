package upstreame2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// skyhook/auto-taint-new-nodes: kind-worker, stripped of every
// skyhook.nvidia.com annotation, is new to a runtime-required Skyhook with
// autoTaintNewNodes, which taints it, completes and lifts the taint; a
// second such Skyhook finds the node no longer new and leaves it untainted.
func TestSkyhookAutoTaintNewNodes(t *testing.T) {
	s := newScenario(t, "skyhook/auto-taint-new-nodes")

	s.step("setup")
	_, _ = s.cli("reset", "auto-taint-new-nodes", "--confirm") // upstream: || true
	_, _ = s.cli("reset", "auto-taint-second", "--confirm")
	s.changeNode("kind-worker", func(node *corev1.Node) {
		for k := range node.Annotations {
			if strings.HasPrefix(k, "skyhook.nvidia.com/") {
				delete(node.Annotations, k)
			}
		}
	})
	s.untaintNode("kind-worker", "skyhook.nvidia.com=runtime-required:NoSchedule-")
	defer s.untaintNode("kind-worker", "skyhook.nvidia.com=runtime-required:NoSchedule-") // finally

	s.step("apply-first-skyhook")
	s.create("skyhook.yaml")

	s.step("assert-taint-applied")
	s.assert("assert-taint-applied.yaml")

	s.step("assert-first-complete")
	s.assert("assert-complete.yaml")

	s.step("apply-second-skyhook")
	s.create("skyhook-second.yaml")

	s.step("assert-no-taint")
	s.assert("assert-no-taint.yaml")
}
