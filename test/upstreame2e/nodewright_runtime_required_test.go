package upstreame2e

import "testing"

// nodewright/runtime-required: the v0.20 counterpart of
// skyhook/runtime-required, running the same body (runtimeRequired) on
// NodeWright v0.20's steps: both workers carry the legacy
// skyhook.nvidia.com runtime-required taint, which v0.20 still recognises
// and removes for a NodeWright; kind-worker2 is also tainted test-block,
// which the NodeWright does not tolerate. kind-worker completes and loses
// its runtime-required taint while kind-worker2, blocked, keeps it;
// untainted, kind-worker2 completes and loses it too.
func TestNodeWrightRuntimeRequired(t *testing.T) {
	runtimeRequired(newScenario(t, "nodewright/runtime-required"))
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
