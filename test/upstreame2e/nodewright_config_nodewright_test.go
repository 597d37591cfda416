package upstreame2e

import "testing"

// reasonConfigGlobMissing says why nodewright/config-nodewright's last step
// is not run.
const reasonConfigGlobMissing = "its manifest nodewright/config-nodewright/update-glob.yaml is in no stored version of " +
	"NodeWright's files (test/reference/nodewright/README.md), so the step that applies it and asserts " +
	"assert-update-glob.yaml is not run; skyhook/config-skyhook's glob update runs it for the Skyhook kind"

// nodewright/config-nodewright: the v0.20 counterpart of
// skyhook/config-skyhook, running the same body (configRollout) on
// NodeWright v0.20's files: three packages, configInterrupts on
// game.properties; a configMap update while they run, another once they
// are complete (config and the merged config interrupts rerun), and one on
// ui.properties, which no configInterrupt names (config only). Its glob
// update is not run (reasonConfigGlobMissing).
func TestNodeWrightConfigNodeWright(t *testing.T) {
	configRollout(newScenario(t, "nodewright/config-nodewright"))
}

// nodeWrightConfigResources are the resources of upstream's v0.20
// nodewright/config-nodewright chainsaw-test.yaml assert steps, in order.
var nodeWrightConfigResources = []string{
	// #0 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
    nodewright.nvidia.com/status_config-skyhook: in_progress
  annotations:
    ("nodewright.nvidia.com/nodeState_config-skyhook" && parse_json("nodewright.nvidia.com/nodeState_config-skyhook")):
      {
        "baxter|3.2.1": {
            "name": "baxter",
            "version": "3.2.1",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "apply",
            "state": "in_progress"
        },
        "spencer|3.2.3": {
            "name": "spencer",
            "version": "3.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "apply",
            "state": "in_progress"
        },
        "dexter|1.2.3": {
            "name": "dexter",
            "version": "1.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "apply",
            "state": "in_progress"
        },
      }
    nodewright.nvidia.com/status_config-skyhook: in_progress
spec:
  taints:
  - effect: NoSchedule
    key: node.kubernetes.io/unschedulable
status:
  (conditions[?type == 'nodewright.nvidia.com/config-skyhook/NotReady']):
  - reason: "Incomplete"
    status: "True"
  (conditions[?type == 'nodewright.nvidia.com/config-skyhook/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #1 assert
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: config-skyhook
status:
  status: in_progress
  nodeState:
    (values(@)):
      - baxter|3.2.1:
          name: baxter
          state: in_progress
          version: '3.2.1'
          stage: apply
          image: ghcr.io/nvidia/skyhook/agentless
        spencer|3.2.3:
          name: spencer
          state: in_progress
          version: '3.2.3'
          stage: apply
          image: ghcr.io/nvidia/skyhook/agentless
        dexter|1.2.3:
          name: dexter
          state: in_progress
          version: '1.2.3'
          stage: apply
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - in_progress
`,
	// #2 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
    nodewright.nvidia.com/status_config-skyhook: complete
  annotations:
    ("nodewright.nvidia.com/nodeState_config-skyhook" && parse_json("nodewright.nvidia.com/nodeState_config-skyhook")):
      {
        "baxter|3.2.1": {
            "name": "baxter",
            "version": "3.2.1",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        },
        "dexter|1.2.3": {
            "name": "dexter",
            "version": "1.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        },
        "spencer|3.2.3": {
            "name": "spencer",
            "version": "3.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        }
      }
    nodewright.nvidia.com/status_config-skyhook: complete
status:
  (conditions[?type == 'nodewright.nvidia.com/config-skyhook/NotReady']):
  - reason: "Complete"
    status: "False"
  (conditions[?type == 'nodewright.nvidia.com/config-skyhook/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #3 assert
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: config-skyhook
status:
  status: complete
  observedGeneration: 2
  nodeState:
    (values(@)):
      - dexter|1.2.3:
          name: dexter
          state: complete
          version: '1.2.3'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
        baxter|3.2.1:
          name: baxter
          state: complete
          version: '3.2.1'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
        spencer|3.2.3:
          name: spencer
          state: complete
          version: '3.2.3'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - complete
`,
	// #4 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
    nodewright.nvidia.com/status_config-skyhook: complete
  annotations:
    ("nodewright.nvidia.com/nodeState_config-skyhook" && parse_json("nodewright.nvidia.com/nodeState_config-skyhook")):
      {
        "baxter|3.2.1": {
            "name": "baxter",
            "version": "3.2.1",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        },
        "dexter|1.2.3": {
            "name": "dexter",
            "version": "1.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        },
        "spencer|3.2.3": {
            "name": "spencer",
            "version": "3.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        }
      }
    nodewright.nvidia.com/status_config-skyhook: complete
status:
  (conditions[?type == 'nodewright.nvidia.com/config-skyhook/NotReady']):
  - reason: "Complete"
    status: "False"
  (conditions[?type == 'nodewright.nvidia.com/config-skyhook/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #5 assert
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: config-skyhook
status:
  status: complete
  observedGeneration: 3
  nodeState:
    (values(@)):
      - dexter|1.2.3:
          name: dexter
          state: complete
          version: '1.2.3'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
        baxter|3.2.1:
          name: baxter
          state: complete
          version: '3.2.1'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
        spencer|3.2.3:
          name: spencer
          state: complete
          version: '3.2.3'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - complete
`,
	// #6 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
    nodewright.nvidia.com/status_config-skyhook: complete
  annotations:
    ("nodewright.nvidia.com/nodeState_config-skyhook" && parse_json("nodewright.nvidia.com/nodeState_config-skyhook")):
      {
        "baxter|3.2.1": {
            "name": "baxter",
            "version": "3.2.1",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        },
        "dexter|1.2.3": {
            "name": "dexter",
            "version": "1.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        },
        "spencer|3.2.3": {
            "name": "spencer",
            "version": "3.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        }
      }
    nodewright.nvidia.com/status_config-skyhook: complete
status:
  (conditions[?type == 'nodewright.nvidia.com/config-skyhook/NotReady']):
  - reason: "Complete"
    status: "False"
  (conditions[?type == 'nodewright.nvidia.com/config-skyhook/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #7 assert
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: config-skyhook
status:
  status: complete
  observedGeneration: 4
  nodeState:
    (values(@)):
      - dexter|1.2.3:
          name: dexter
          state: complete
          version: '1.2.3'
          stage: config
          image: ghcr.io/nvidia/skyhook/agentless
        baxter|3.2.1:
          name: baxter
          state: complete
          version: '3.2.1'
          stage: config
          image: ghcr.io/nvidia/skyhook/agentless
        spencer|3.2.3:
          name: spencer
          state: complete
          version: '3.2.3'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - complete
`,
}
