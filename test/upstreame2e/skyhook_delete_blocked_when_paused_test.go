package upstreame2e

import "testing"

// skyhook/delete-blocked-when-paused: a paused Skyhook whose package has
// uninstall support is not let go when deleted (DeletionBlocked, a Warning
// event); once resumed, the uninstall runs and it goes.
func TestSkyhookDeleteBlockedWhenPaused(t *testing.T) {
	deleteBlocked(newScenario(t, "skyhook/delete-blocked-when-paused"), heldByPause)
}

// deleteBlockedWhenPausedResources are the resources of upstream's
// delete-blocked-when-paused chainsaw-test.yaml assert steps, in order.
var deleteBlockedWhenPausedResources = []string{
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: delete-blocked-when-paused
status:
  status: complete
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: delete-blocked-when-paused
  (deletionTimestamp != null): true
status:
  (conditions[?type == 'DeletionBlocked']):
  - status: "True"
    reason: "PausedWithPendingUninstall"
`,
}
