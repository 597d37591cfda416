package upstreame2e

import "testing"

// skyhook/delete-blocked-when-disabled: a disabled Skyhook whose package has
// uninstall support is not let go when deleted (DeletionBlocked, a Warning
// event); once re-enabled, the uninstall runs and it goes.
func TestSkyhookDeleteBlockedWhenDisabled(t *testing.T) {
	s := newScenario(t, "skyhook/delete-blocked-when-disabled")
	const name = "delete-blocked-when-disabled"

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create("skyhook.yaml")
	s.assertInline(0)

	s.step("disable-then-delete")
	if _, err := s.kubectl("annotate", "skyhook", name, "skyhook.nvidia.com/disable=true", "--overwrite"); err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	if _, err := s.kubectl("delete", "skyhook", name, "--wait=false"); err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	s.assertInline(1)
	s.eventsExist("type=Warning,reason=DeletionBlocked,involvedObject.kind=Skyhook,involvedObject.name="+name, assertTimeout)

	s.step("reenable-drains-finalizer")
	if _, err := s.kubectl("annotate", "skyhook", name, "skyhook.nvidia.com/disable-", "--overwrite"); err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	s.waitGone(name, assertTimeout)
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
