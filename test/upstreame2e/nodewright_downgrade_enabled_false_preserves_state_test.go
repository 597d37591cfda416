package upstreame2e

import "testing"

// nodewright/downgrade-enabled-false-preserves-state: the v0.20
// counterpart of skyhook/downgrade-enabled-false-preserves-state, running
// the same body (downgradeEnabledFalsePreservesState) on NodeWright v0.20's
// files: a package without uninstall support is downgraded without an
// uninstall, and the record of the version it replaces stays beside the
// new one in the nodewright.nvidia.com node state.
func TestNodeWrightDowngradeEnabledFalsePreservesState(t *testing.T) {
	downgradeEnabledFalsePreservesState(newScenario(t, "nodewright/downgrade-enabled-false-preserves-state"))
}

// nodeWrightDowngradeEnabledFalsePreservesStateResources are the resources
// of upstream's v0.20 nodewright/downgrade-enabled-false-preserves-state
// chainsaw-test.yaml assert steps, in order.
var nodeWrightDowngradeEnabledFalsePreservesStateResources = []string{
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: preserve-downgrade-state
status:
  status: complete
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
  annotations:
    ("nodewright.nvidia.com/nodeState_preserve-downgrade-state" && parse_json("nodewright.nvidia.com/nodeState_preserve-downgrade-state")):
      {
        "mypkg|2.1.4": {
            "name": "mypkg",
            "version": "2.1.4",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        },
        "mypkg|1.2.3": {
            "name": "mypkg",
            "version": "1.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        }
      }
`,
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: preserve-downgrade-state
status:
  status: complete
`,
}
