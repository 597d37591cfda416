package upstreame2e

import "testing"

// skyhook/delete-blocked-when-disabled: a disabled Skyhook whose package has
// uninstall support is not let go when deleted (DeletionBlocked, a Warning
// event); once re-enabled, the uninstall runs and it goes.
func TestSkyhookDeleteBlockedWhenDisabled(t *testing.T) {
	deleteBlocked(newScenario(t, "skyhook/delete-blocked-when-disabled"), heldByDisable)
}

// deleteBlockedWhenDisabledResources are the resources of upstream's
// delete-blocked-when-disabled chainsaw-test.yaml assert steps, in order.
var deleteBlockedWhenDisabledResources = []string{
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: delete-blocked-when-disabled
status:
  status: complete
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: delete-blocked-when-disabled
  (deletionTimestamp != null): true
status:
  (conditions[?type == 'DeletionBlocked']):
  - status: "True"
    reason: "DisabledWithPendingUninstall"
`,
}
