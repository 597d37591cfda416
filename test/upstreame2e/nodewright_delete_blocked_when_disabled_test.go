package upstreame2e

import "testing"

// nodewright/delete-blocked-when-disabled: the v0.20 counterpart of
// skyhook/delete-blocked-when-disabled, running the same body
// (deleteBlocked) on NodeWright v0.20's files: a disabled NodeWright
// whose package has uninstall support is not let go when deleted
// (DeletionBlocked, a Warning event on the NodeWright); once re-enabled, the
// uninstall runs and it goes.
func TestNodeWrightDeleteBlockedWhenDisabled(t *testing.T) {
	deleteBlocked(newScenario(t, "nodewright/delete-blocked-when-disabled"), heldByDisable)
}

// nodeWrightDeleteBlockedWhenDisabledResources are the resources of upstream's
// v0.20 nodewright/delete-blocked-when-disabled chainsaw-test.yaml assert steps,
// in order.
var nodeWrightDeleteBlockedWhenDisabledResources = []string{
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: delete-blocked-when-disabled
status:
  status: complete
`,
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: delete-blocked-when-disabled
  (deletionTimestamp != null): true
status:
  (conditions[?type == 'DeletionBlocked']):
  - status: "True"
    reason: "DisabledWithPendingUninstall"
`,
}
