package upstreame2e

import (
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// nodewright/delete-blocked-when-paused: skyhook/delete-blocked-when-paused for
// the NodeWright kind (NodeWright v0.20's files): a paused NodeWright whose
// package has uninstall support is not let go when deleted
// (DeletionBlocked, a Warning event on the NodeWright); once resumed, the
// uninstall runs and it goes.
func TestNodeWrightDeleteBlockedWhenPaused(t *testing.T) {
	s := newScenario(t, "nodewright/delete-blocked-when-paused")
	const name = "delete-blocked-when-paused"

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create("nodewright.yaml")
	s.assertInline(0)

	s.step("pause-then-delete")
	if _, err := s.kubectl("annotate", "nodewright", name, "nodewright.nvidia.com/pause=true", "--overwrite"); err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	if _, err := s.kubectl("delete", "nodewright", name, "--wait=false"); err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	s.assertInline(1)
	s.eventsExist("type=Warning,reason=DeletionBlocked,involvedObject.kind=NodeWright,involvedObject.name="+name, assertTimeout)

	s.step("unpause-drains-finalizer")
	if _, err := s.kubectl("annotate", "nodewright", name, "nodewright.nvidia.com/pause-", "--overwrite"); err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	s.waitGoneOf(skyhookv1.NodeWrights, name, assertTimeout)
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
