package upstreame2e

import (
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// nodewright/delete-blocked-when-disabled: skyhook/delete-blocked-when-disabled for
// the NodeWright kind (NodeWright v0.20's files): a disabled NodeWright whose
// package has uninstall support is not let go when deleted
// (DeletionBlocked, a Warning event on the NodeWright); once re-enabled, the
// uninstall runs and it goes.
func TestNodeWrightDeleteBlockedWhenDisabled(t *testing.T) {
	s := newScenario(t, "nodewright/delete-blocked-when-disabled")
	const name = "delete-blocked-when-disabled"

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create("nodewright.yaml")
	s.assertInline(0)

	s.step("disable-then-delete")
	if _, err := s.kubectl("annotate", "nodewright", name, "nodewright.nvidia.com/disable=true", "--overwrite"); err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	if _, err := s.kubectl("delete", "nodewright", name, "--wait=false"); err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	s.assertInline(1)
	s.eventsExist("type=Warning,reason=DeletionBlocked,involvedObject.kind=NodeWright,involvedObject.name="+name, assertTimeout)

	s.step("reenable-drains-finalizer")
	if _, err := s.kubectl("annotate", "nodewright", name, "nodewright.nvidia.com/disable-", "--overwrite"); err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	s.waitGoneOf(skyhookv1.NodeWrights, name, assertTimeout)
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
