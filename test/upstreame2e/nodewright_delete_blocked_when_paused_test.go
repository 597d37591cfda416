package upstreame2e

import "testing"

// nodewright/delete-blocked-when-paused: the v0.20 counterpart of
// skyhook/delete-blocked-when-paused, running the same body
// (deleteBlocked) on NodeWright v0.20's files: a paused NodeWright
// whose package has uninstall support is not let go when deleted
// (DeletionBlocked, a Warning event on the NodeWright); once resumed, the
// uninstall runs and it goes.
func TestNodeWrightDeleteBlockedWhenPaused(t *testing.T) {
	deleteBlocked(newScenario(t, "nodewright/delete-blocked-when-paused"), heldByPause)
}

// nodeWrightDeleteBlockedWhenPausedResources are the resources of upstream's
// v0.20 nodewright/delete-blocked-when-paused chainsaw-test.yaml assert steps,
// in order.
var nodeWrightDeleteBlockedWhenPausedResources = []string{
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: delete-blocked-when-paused
status:
  status: complete
`,
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: delete-blocked-when-paused
  (deletionTimestamp != null): true
status:
  (conditions[?type == 'DeletionBlocked']):
  - status: "True"
    reason: "PausedWithPendingUninstall"
`,
}
