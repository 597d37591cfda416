package upstreame2e

import (
	"testing"
	"time"
)

// skyhook/uninstall-cancel: uninstall.apply set back to false while the
// uninstall runs puts the package back into its install, and the node
// completes with it installed.
func TestSkyhookUninstallCancel(t *testing.T) {
	s := newScenario(t, "skyhook/uninstall-cancel")
	const name = "uninstall-cancel"

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create("skyhook.yaml")
	s.assertInline(0)

	s.step("trigger-then-cancel")
	s.update("update-trigger-uninstall.yaml")
	s.assertInline(1)
	s.sleep(15 * time.Second)
	s.update("update-cancel-uninstall.yaml")
	s.assertInline(2)
	s.assertInline(3)
}

// uninstallCancelResources are the resources of upstream's
// uninstall-cancel chainsaw-test.yaml assert steps, in order.
var uninstallCancelResources = []string{
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-cancel
status:
  status: complete
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_uninstall-cancel: in_progress
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_uninstall-cancel: complete
  annotations:
    ("skyhook.nvidia.com/nodeState_uninstall-cancel" && parse_json("skyhook.nvidia.com/nodeState_uninstall-cancel")):
      {
        "mypkg|2.1.4": {
            "name": "mypkg",
            "version": "2.1.4",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        }
      }
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-cancel
status:
  status: complete
`,
}
