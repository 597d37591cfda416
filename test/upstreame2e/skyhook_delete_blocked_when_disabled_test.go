package upstreame2e

import "testing"

// skyhook/delete-blocked-when-disabled: a disabled Skyhook whose package has
// uninstall support is not let go when deleted (DeletionBlocked, a Warning
// event); once re-enabled, the uninstall runs and it goes.
func TestSkyhookDeleteBlockedWhenDisabled(t *testing.T) {
	deleteBlockedWhenDisabled(newScenario(t, "skyhook/delete-blocked-when-disabled"))
}

// deleteBlockedWhenDisabled is the body of skyhook/delete-blocked-when-disabled
// and of its v0.20 twin nodewright/delete-blocked-when-disabled: the
// scenario's kind names the manifest, the kubectl resource, the
// annotation and the event's object.
func deleteBlockedWhenDisabled(s *scenario) {
	const name = "delete-blocked-when-disabled"

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create(s.rolloutFile())
	s.assertInline(0)

	s.step("disable-then-delete")
	if _, err := s.kubectl("annotate", s.resource(), name, s.key("disable=true"), "--overwrite"); err != nil {
		s.t.Fatalf("upstream's script step failed: %v", err)
	}
	if _, err := s.kubectl("delete", s.resource(), name, "--wait=false"); err != nil {
		s.t.Fatalf("upstream's script step failed: %v", err)
	}
	s.assertInline(1)
	s.eventsExist("type=Warning,reason=DeletionBlocked,involvedObject.kind="+s.kind.Kind+",involvedObject.name="+name, assertTimeout)

	s.step("reenable-drains-finalizer")
	if _, err := s.kubectl("annotate", s.resource(), name, s.key("disable-"), "--overwrite"); err != nil {
		s.t.Fatalf("upstream's script step failed: %v", err)
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
