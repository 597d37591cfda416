package upstreame2e

import "testing"

// skyhook/delete-blocked-when-paused: a paused Skyhook whose package has
// uninstall support is not let go when deleted (DeletionBlocked, a Warning
// event); once resumed, the uninstall runs and it goes.
func TestSkyhookDeleteBlockedWhenPaused(t *testing.T) {
	deleteBlockedWhenPaused(newScenario(t, "skyhook/delete-blocked-when-paused"))
}

// deleteBlockedWhenPaused is the body of skyhook/delete-blocked-when-paused
// and of its v0.20 twin nodewright/delete-blocked-when-paused: the
// scenario's kind names the manifest, the kubectl resource, the
// annotation and the event's object.
func deleteBlockedWhenPaused(s *scenario) {
	const name = "delete-blocked-when-paused"

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create(s.rolloutFile())
	s.assertInline(0)

	s.step("pause-then-delete")
	if _, err := s.kubectl("annotate", s.resource(), name, s.key("pause=true"), "--overwrite"); err != nil {
		s.t.Fatalf("upstream's script step failed: %v", err)
	}
	if _, err := s.kubectl("delete", s.resource(), name, "--wait=false"); err != nil {
		s.t.Fatalf("upstream's script step failed: %v", err)
	}
	s.assertInline(1)
	s.eventsExist("type=Warning,reason=DeletionBlocked,involvedObject.kind="+s.kind.Kind+",involvedObject.name="+name, assertTimeout)

	s.step("unpause-drains-finalizer")
	if _, err := s.kubectl("annotate", s.resource(), name, s.key("pause-"), "--overwrite"); err != nil {
		s.t.Fatalf("upstream's script step failed: %v", err)
	}
	s.waitGone(name, assertTimeout)
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
