package upstreame2e

import "testing"

// nodewright/interrupt-grouping: the v0.20 counterpart of
// skyhook/interrupt-grouping, running the same body (interruptGrouping) on
// NodeWright v0.20's files: zeb restarts cron, dax restarts containerd and
// foobar; the node runs one interrupt for both, restarting the three
// services, and both packages complete at post-interrupt.
func TestNodeWrightInterruptGrouping(t *testing.T) {
	interruptGrouping(newScenario(t, "nodewright/interrupt-grouping"))
}

// nodeWrightInterruptGroupingResources are the resources of upstream's
// v0.20 nodewright/interrupt-grouping chainsaw-test.yaml assert steps, in
// order.
var nodeWrightInterruptGroupingResources = []string{
	// #0 assert
	`
kind: Node
apiVersion: v1
metadata:
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
    nodewright.nvidia.com/status_interrupt-grouping: in_progress
  annotations:
    nodewright.nvidia.com/status_interrupt-grouping: in_progress
spec:
  taints:
  - effect: NoSchedule
    key: node.kubernetes.io/unschedulable
status:
  (conditions[?type == 'nodewright.nvidia.com/interrupt-grouping/NotReady']):
  - reason: "Incomplete"
    status: "True"
  (conditions[?type == 'nodewright.nvidia.com/interrupt-grouping/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #1 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: nodewright
  labels:
    nodewright.nvidia.com/name: interrupt-grouping
    nodewright.nvidia.com/package: dax-1.2.3
  annotations:
    nodewright.nvidia.com/package: >-
      {"name":"dax","version":"1.2.3","skyhook":"interrupt-grouping","stage":"apply","image":"ghcr.io/nvidia/skyhook/agentless"}
  ownerReferences:
    - apiVersion: nodewright.nvidia.com/v1alpha1
      kind: NodeWright
      name: interrupt-grouping
spec:
  initContainers:
    - name: dax-init
      image: ghcr.io/nvidia/skyhook/agentless:1.2.3
    - name: dax-apply
      image: ghcr.io/nvidia/skyhook/agentless:6.2.0
      args:
        ([0]): apply
        ([1]): /root
        (length(@)): 3
    - name: dax-applycheck
      image: ghcr.io/nvidia/skyhook/agentless:6.2.0
      args:
        ([0]): apply-check
        ([1]): /root
        (length(@)): 3
  (tolerations[?key == 'nvidia.com/gpu']):
    - operator: Exists
`,
	// #2 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: nodewright
  labels:
    nodewright.nvidia.com/name: interrupt-grouping
    nodewright.nvidia.com/package: dax-1.2.3
  annotations:
    nodewright.nvidia.com/package: >-
      {"name":"dax","version":"1.2.3","skyhook":"interrupt-grouping","stage":"config","image":"ghcr.io/nvidia/skyhook/agentless"}
  ownerReferences:
    - apiVersion: nodewright.nvidia.com/v1alpha1
      kind: NodeWright
      name: interrupt-grouping
spec:
  initContainers:
    - name: dax-init
    - name: dax-config
      args:
        ([0]): config
        ([1]): /root
        (length(@)): 3
    - name: dax-configcheck
      args:
        ([0]): config-check
        ([1]): /root
        (length(@)): 3
  (tolerations[?key == 'nvidia.com/gpu']):
    - operator: Exists
`,
	// #3 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: nodewright
  labels:
    nodewright.nvidia.com/name: interrupt-grouping
    nodewright.nvidia.com/package: dax-1.2.3
  annotations:
    ("nodewright.nvidia.com/package" && parse_json("nodewright.nvidia.com/package")):
      {
        "name": "dax",
        "version": "1.2.3",
        "skyhook": "interrupt-grouping",
        "stage": "interrupt",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
  ownerReferences:
    - apiVersion: nodewright.nvidia.com/v1alpha1
      kind: NodeWright
      name: interrupt-grouping
spec:
  initContainers:
    - name: interrupt
      args:
        ([0]): interrupt
        ([1]): /root
        (parse_json(base64_decode([3]))):
          {
              "type": "service_restart",
              "services": [
                  "containerd",
                  "cron",
                  "foobar"
              ]
          }
        (length(@)): 4
  (tolerations[?key == 'nvidia.com/gpu']):
    - operator: Exists
`,
	// #4 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: nodewright
  labels:
    nodewright.nvidia.com/name: interrupt-grouping
    nodewright.nvidia.com/package: dax-1.2.3
  annotations:
    nodewright.nvidia.com/package: >-
      {"name":"dax","version":"1.2.3","skyhook":"interrupt-grouping","stage":"post-interrupt","image":"ghcr.io/nvidia/skyhook/agentless"}
  ownerReferences:
    - apiVersion: nodewright.nvidia.com/v1alpha1
      kind: NodeWright
      name: interrupt-grouping
spec:
  initContainers:
    - name: dax-init
    - name: dax-post-interrupt
      args:
        ([0]): post-interrupt
        ([1]): /root
        (length(@)): 3
    - name: dax-post-interruptcheck
      args:
        ([0]): post-interrupt-check
        ([1]): /root
        (length(@)): 3
  (tolerations[?key == 'nvidia.com/gpu']):
    - operator: Exists
`,
	// #5 assert
	`
kind: Node
apiVersion: v1
metadata:
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
    nodewright.nvidia.com/status_interrupt-grouping: complete
  annotations:
    (length("nodewright.nvidia.com/version_interrupt-grouping") >= ` + "`" + `6` + "`" + `): true
    nodewright.nvidia.com/nodeState_interrupt-grouping: >-
      {"dax|1.2.3":{"name":"dax","version":"1.2.3","image":"ghcr.io/nvidia/skyhook/agentless","stage":"post-interrupt","state":"complete"},"zeb|2.1.4":{"name":"zeb","version":"2.1.4","image":"ghcr.io/nvidia/skyhook/agentless","stage":"post-interrupt","state":"complete"}}
    nodewright.nvidia.com/status_interrupt-grouping: complete
  (!taints || length(taints)==` + "`" + `0` + "`" + ` || (taints && !not_null(taints))): true ## taints should be empty or not exist
status:
  (conditions[?type == 'nodewright.nvidia.com/interrupt-grouping/NotReady']):
  - reason: "Complete"
    status: "False"
  (conditions[?type == 'nodewright.nvidia.com/interrupt-grouping/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #6 assert
	`
kind: NodeWright
apiVersion: nodewright.nvidia.com/v1alpha1
metadata:
  name: interrupt-grouping
  annotations:
    ## test that version info is present
    ## the quotes are to escape the . and / in the key
    (length("nodewright.nvidia.com/version") >= ` + "`" + `6` + "`" + `): true
status:
  status: complete
  (to_number(observedGeneration) == ` + "`" + `2` + "`" + ` || to_number(observedGeneration) == ` + "`" + `3` + "`" + `): true ## migrate seems to add 1, but not in all cases it seems
  nodeState:
    (values(@)):
      - dax|1.2.3:
          name: dax
          stage: post-interrupt
          state: complete
          version: 1.2.3
          image: ghcr.io/nvidia/skyhook/agentless
        zeb|2.1.4:
          name: zeb
          stage: post-interrupt
          state: complete
          version: 2.1.4
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - complete
`,
	// #7 assert
	`
kind: ConfigMap
apiVersion: v1
metadata:
  namespace: nodewright
  labels:
    nodewright.nvidia.com/skyhook-node-meta: interrupt-grouping
  ownerReferences:
  - apiVersion: nodewright.nvidia.com/v1alpha1
    blockOwnerDeletion: true
    controller: true
    kind: NodeWright
    name: interrupt-grouping
data:
  (length(@)): 3
  labels.json:
    (contains(@, 'nodewright.nvidia.com/test-node')): true
    (contains(@, 'nodewright.nvidia.com/status_interrupt-grouping')): true
  annotations.json:
    (contains(@, 'nodewright.nvidia.com/status_interrupt-grouping')): true
    (contains(@, 'nodewright.nvidia.com/nodeState_interrupt-grouping')): true
  packages.json:
    (contains(@, '"agentVersion"')): true
    (contains(@, '"dax"')): true
`,
}
