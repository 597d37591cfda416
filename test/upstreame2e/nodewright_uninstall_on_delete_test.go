package upstreame2e

import (
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// nodewright/uninstall-on-delete: skyhook/uninstall-on-delete for the
// NodeWright kind (NodeWright v0.20's files): deleting a NodeWright
// uninstalls its uninstall.enabled package from the node before the
// finalizer lets go; the record of the package without uninstall support
// stays on the node.
func TestNodeWrightUninstallOnDelete(t *testing.T) {
	s := newScenario(t, "nodewright/uninstall-on-delete")
	const name = "uninstall-on-delete"
	pods := recordStagePodsOf(t, skyhookv1.NodeWrights, name)

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create("nodewright.yaml")
	s.assertInline(0)

	s.step("delete-cr")
	_, _ = s.kubectl("delete", "nodewright", name, "--wait=false")
	s.assertInline(1) // NodeWright's uninstall pod shape (skipped); its counterpart:
	checkUninstallPod(s, pods.wait(s, "enabled-pkg", skyhookv1.StageUninstall), "2.1.4")
	s.waitGoneOf(skyhookv1.NodeWrights, name, assertTimeout)
	s.assertInline(2)
	// Upstream's README: no uninstall pod for the package without
	// uninstall support.
	if pod := pods.get("disabled-pkg", skyhookv1.StageUninstall); pod != nil {
		t.Errorf("an uninstall pod ran for disabled-pkg (uninstall not enabled): %s", pod.Name)
	}
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
