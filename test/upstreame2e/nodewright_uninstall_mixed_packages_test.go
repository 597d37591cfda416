package upstreame2e

import "testing"

// nodewright/uninstall-mixed-packages: the v0.20 counterpart of
// skyhook/uninstall-mixed-packages, running the same body
// (uninstallMixedPackages) on NodeWright v0.20's files: uninstalling one
// package leaves the other installed; dropping from the spec the package
// without uninstall support keeps its record on the node.
func TestNodeWrightUninstallMixedPackages(t *testing.T) {
	uninstallMixedPackages(newScenario(t, "nodewright/uninstall-mixed-packages"))
}

// nodeWrightUninstallMixedPackagesResources are the resources of upstream's
// v0.20 nodewright/uninstall-mixed-packages chainsaw-test.yaml assert
// steps, in order.
var nodeWrightUninstallMixedPackagesResources = []string{
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: uninstall-mixed-packages
status:
  status: complete
`,
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    nodewright.nvidia.com/name: uninstall-mixed-packages
    nodewright.nvidia.com/package: pkg-remove-2.1.4
spec:
  initContainers:
    - name: pkg-remove-init
    - name: pkg-remove-uninstall
      args:
        ([0]): uninstall
    - name: pkg-remove-uninstallcheck
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
  annotations:
    ("nodewright.nvidia.com/nodeState_uninstall-mixed-packages" && parse_json("nodewright.nvidia.com/nodeState_uninstall-mixed-packages")):
      {
        "pkg-keep|2.1.4": {
            "name": "pkg-keep",
            "version": "2.1.4",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        }
      }
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
  annotations:
    (parse_json("nodewright.nvidia.com/nodeState_uninstall-mixed-packages")."pkg-keep|2.1.4".name == 'pkg-keep'): true
    (parse_json("nodewright.nvidia.com/nodeState_uninstall-mixed-packages")."pkg-keep|2.1.4".stage == 'config'): true
    (parse_json("nodewright.nvidia.com/nodeState_uninstall-mixed-packages")."pkg-keep|2.1.4".state == 'complete'): true
`,
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: uninstall-mixed-packages
status:
  status: complete
`,
}
