package upstreame2e

import "testing"

// nodewright/uninstall-on-delete: the v0.20 counterpart of
// skyhook/uninstall-on-delete, running the same body (uninstallOnDelete) on
// NodeWright v0.20's files: deleting a NodeWright uninstalls its
// uninstall.enabled package from the node before the finalizer lets go;
// the record of the package without uninstall support stays on the node.
func TestNodeWrightUninstallOnDelete(t *testing.T) {
	uninstallOnDelete(newScenario(t, "nodewright/uninstall-on-delete"))
}

// nodeWrightUninstallOnDeleteResources are the resources of upstream's v0.20
// nodewright/uninstall-on-delete chainsaw-test.yaml assert steps, in order.
var nodeWrightUninstallOnDeleteResources = []string{
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: uninstall-on-delete
status:
  status: complete
`,
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    nodewright.nvidia.com/name: uninstall-on-delete
    nodewright.nvidia.com/package: enabled-pkg-2.1.4
spec:
  initContainers:
    - name: enabled-pkg-init
    - name: enabled-pkg-uninstall
      args:
        ([0]): uninstall
    - name: enabled-pkg-uninstallcheck
      args:
        ([0]): uninstall-check
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
  annotations:
    (parse_json("nodewright.nvidia.com/nodeState_uninstall-on-delete")."disabled-pkg|2.1.4".name == 'disabled-pkg'): true
    (parse_json("nodewright.nvidia.com/nodeState_uninstall-on-delete")."disabled-pkg|2.1.4".stage == 'config'): true
    (parse_json("nodewright.nvidia.com/nodeState_uninstall-on-delete")."disabled-pkg|2.1.4".state == 'complete'): true
`,
}
