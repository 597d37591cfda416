package upstreame2e

import (
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// nodewright/runtime-required: skyhook/runtime-required for the NodeWright
// kind (NodeWright v0.20's steps): both workers carry the legacy
// skyhook.nvidia.com runtime-required taint, which v0.20 still recognises
// and removes for a NodeWright; kind-worker2 is also tainted test-block,
// which the NodeWright does not tolerate. kind-worker completes and loses
// its runtime-required taint while kind-worker2, blocked, keeps it;
// untainted, kind-worker2 completes and loses it too.
func TestNodeWrightRuntimeRequired(t *testing.T) {
	s := newScenario(t, "nodewright/runtime-required")
	pods := watchRolloutStagePods(t, skyhookv1.NodeWrights, "runtime-required")
	const label = "nodewright.nvidia.com/runtime-required-test=true"

	s.step("setup-and-block-node2")
	_, _ = s.cli("reset", "runtime-required", "--confirm") // upstream: || true
	s.labelNode("kind-worker", label)
	s.labelNode("kind-worker2", label)
	s.taintNodes("all", "skyhook.nvidia.com=runtime-required:NoSchedule", label)
	defer s.untaintNodes("all", "skyhook.nvidia.com=runtime-required:NoSchedule", label) // finally
	s.taintNode("kind-worker2", "test-block=true:NoSchedule")

	s.step("apply-skyhook")
	s.createInline(0)

	s.step("assert-node1-complete-node2-blocked")
	s.assertInline(1) // apply pod on kind-worker (NodeWright's pod shape: skipped, checked below)
	s.assertInline(2) // config pod on kind-worker (likewise)
	s.assertInline(3) // kind-worker complete, its runtime-required taint gone
	s.assertInline(4) // kind-worker2 blocked, its taints kept
	checkStages(t, pods, "kind-worker", "spencer", "apply", "config")

	s.step("unblock-node2")
	s.untaintNode("kind-worker2", "test-block-")

	s.step("assert-node2-complete")
	s.assertInline(5) // apply pod on kind-worker2 (skipped, checked below)
	s.assertInline(6) // config pod on kind-worker2 (likewise)
	s.assertInline(7) // kind-worker2 complete, its runtime-required taint gone
	checkStages(t, pods, "kind-worker2", "spencer", "apply", "config")

	s.step("assert-final-state")
	s.assertInline(8)
}

// nodeWrightRuntimeRequiredResources are the resources of upstream's v0.20
// nodewright/runtime-required chainsaw-test.yaml, in order: the NodeWright
// it creates, then its asserts.
var nodeWrightRuntimeRequiredResources = []string{
	// #0 create
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  labels:
    app.kubernetes.io/part-of: skyhook-operator
    app.kubernetes.io/created-by: skyhook-operator
  name: runtime-required
spec:
  runtimeRequired: true
  nodeSelectors:
    matchLabels:
      nodewright.nvidia.com/runtime-required-test: "true"
  packages:
    spencer:
      version: "3.2.3"
      image: ghcr.io/nvidia/skyhook/agentless
      env: 
        - name: SLEEP_LEN
          value: "2"
`,
	// #1 assert
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: nodewright
  labels:
    nodewright.nvidia.com/name: runtime-required
    nodewright.nvidia.com/package: spencer-3.2.3
  annotations:
    ("nodewright.nvidia.com/package" && parse_json("nodewright.nvidia.com/package").stage == 'apply'): true
spec:
  nodeName: kind-worker
`,
	// #2 assert
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: nodewright
  labels:
    nodewright.nvidia.com/name: runtime-required
    nodewright.nvidia.com/package: spencer-3.2.3
  annotations:
    ("nodewright.nvidia.com/package" && parse_json("nodewright.nvidia.com/package").stage == 'config'): true
spec:
  nodeName: kind-worker
`,
	// #3 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  labels:
    nodewright.nvidia.com/status_runtime-required: complete
  annotations:
    nodewright.nvidia.com/status_runtime-required: complete
spec:
  (!taints || length(taints[?key == 'skyhook.nvidia.com' && effect == 'NoSchedule' && value == 'runtime-required'])==` + "`" + `0` + "`" + `): true
`,
	// #4 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker2
  labels:
    nodewright.nvidia.com/status_runtime-required: blocked
  annotations:
    nodewright.nvidia.com/status_runtime-required: blocked
spec:
  taints:
  - key: test-block
    value: "true"
    effect: NoSchedule
  - key: skyhook.nvidia.com
    value: runtime-required
    effect: NoSchedule
`,
	// #5 assert
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: nodewright
  labels:
    nodewright.nvidia.com/name: runtime-required
    nodewright.nvidia.com/package: spencer-3.2.3
  annotations:
    ("nodewright.nvidia.com/package" && parse_json("nodewright.nvidia.com/package").stage == 'apply'): true
spec:
  nodeName: kind-worker2
`,
	// #6 assert
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: nodewright
  labels:
    nodewright.nvidia.com/name: runtime-required
    nodewright.nvidia.com/package: spencer-3.2.3
  annotations:
    ("nodewright.nvidia.com/package" && parse_json("nodewright.nvidia.com/package").stage == 'config'): true
spec:
  nodeName: kind-worker2
`,
	// #7 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker2
  labels:
    nodewright.nvidia.com/status_runtime-required: complete
  annotations:
    nodewright.nvidia.com/status_runtime-required: complete
spec:
  (!taints || length(taints[?key == 'skyhook.nvidia.com' && effect == 'NoSchedule' && value == 'runtime-required'])==` + "`" + `0` + "`" + `): true
`,
	// #8 assert
	`
# This assertion validates per-node runtime-required behavior:
# - Each node with the test label should have status=complete
# - Each node's runtime-required taint should be removed independently
# - Both kind-worker and kind-worker2 are tested (multi-node isolation)
apiVersion: v1
kind: Node
metadata:
  labels:
    nodewright.nvidia.com/runtime-required-test: "true"
    nodewright.nvidia.com/status_runtime-required: complete
  annotations:
    nodewright.nvidia.com/status_runtime-required: complete
spec:
  # Verify the runtime-required taint has been removed from this node
  (!taints || length(taints)==` + "`" + `0` + "`" + ` || length(taints[?key == 'skyhook.nvidia.com' && effect == 'NoSchedule'  && value == 'runtime-required'])==` + "`" + `0` + "`" + `): true
`,
}
