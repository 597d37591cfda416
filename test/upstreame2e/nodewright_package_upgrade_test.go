package upstreame2e

import "testing"

// nodewright/package-upgrade: the v0.20 counterpart of
// skyhook/package-upgrade, running the same body (packageUpgrade) on
// NodeWright v0.20's files: nullptr 2.0.0 (a service interrupt) installs
// through apply, config, interrupt and post-interrupt; bumped to 2.0.1 with
// a changed configMap, it runs the upgrade stage (not apply), the interrupt
// again, and completes at post-interrupt.
func TestNodeWrightPackageUpgrade(t *testing.T) {
	packageUpgrade(newScenario(t, "nodewright/package-upgrade"))
}

// nodeWrightPackageUpgradeResources are the resources of upstream's v0.20
// nodewright/package-upgrade chainsaw-test.yaml assert steps, in order.
var nodeWrightPackageUpgradeResources = []string{
	// #0 assert
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
    nodewright.nvidia.com/status_package-upgrade: in_progress
  annotations:
    ("nodewright.nvidia.com/nodeState_package-upgrade" && parse_json("nodewright.nvidia.com/nodeState_package-upgrade")):
      {
        "nullptr|2.0.1": {
            "name": "nullptr",
            "version": "2.0.1",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "upgrade",
            "state": "in_progress"
        }
      }
    nodewright.nvidia.com/status_package-upgrade: in_progress
spec:
  taints:
  - effect: NoSchedule
    key: node.kubernetes.io/unschedulable
status:
  (conditions[?type == 'nodewright.nvidia.com/package-upgrade/NotReady']):
  - reason: "Incomplete"
    status: "True"
  (conditions[?type == 'nodewright.nvidia.com/package-upgrade/Erroring']):
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
    nodewright.nvidia.com/name: package-upgrade
    nodewright.nvidia.com/package: nullptr-2.0.1
  annotations:
    ("nodewright.nvidia.com/package" && parse_json("nodewright.nvidia.com/package")):
      {
        "name": "nullptr",
        "version": "2.0.1",
        "skyhook": "package-upgrade",
        "stage": "upgrade",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
  ownerReferences:
    - apiVersion: nodewright.nvidia.com/v1alpha1
      kind: NodeWright
      name: package-upgrade
spec:
  initContainers:
    - name: nullptr-init
    - name: nullptr-upgrade
      args:
        ([0]): upgrade
        ([1]): /root
        (length(@)): 3
    - name: nullptr-upgradecheck
      args:
        ([0]): upgrade-check
        ([1]): /root
        (length(@)): 3
`,
	// #2 assert
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
    nodewright.nvidia.com/status_package-upgrade: complete
  annotations:
    ("nodewright.nvidia.com/nodeState_package-upgrade" && parse_json("nodewright.nvidia.com/nodeState_package-upgrade")):
      {
        "nullptr|2.0.1": {
            "name": "nullptr",
            "version": "2.0.1",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        }
      }
    nodewright.nvidia.com/status_package-upgrade: complete
status:
  (conditions[?type == 'nodewright.nvidia.com/package-upgrade/NotReady']):
  - reason: "Complete"
    status: "False"
  (conditions[?type == 'nodewright.nvidia.com/package-upgrade/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #3 assert
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: package-upgrade
status:
  status: complete
  observedGeneration: 4
  completeNodes: 1/1
  packageList: nullptr:2.0.1
  nodesInProgress: 0
  nodeState:
    (values(@)):
      - nullptr|2.0.1:
          name: nullptr
          state: complete
          version: '2.0.1'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - complete
`,
}
