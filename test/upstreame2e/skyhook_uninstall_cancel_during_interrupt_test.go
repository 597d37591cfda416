package upstreame2e

import "testing"

// skyhook/uninstall-cancel-during-interrupt: uninstall.apply set back to
// false once the uninstall's interrupt runs does not stop it:
// UninstallInProgress stays until the cycle ends, then the package is
// installed again and the condition goes. A last uninstall leaves the node
// without the package before the Skyhook is deleted.
func TestSkyhookUninstallCancelDuringInterrupt(t *testing.T) {
	s := newScenario(t, "skyhook/uninstall-cancel-during-interrupt")
	const name = "uninstall-cancel-during-interrupt"

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create("skyhook.yaml")
	s.assertInline(0)

	s.step("trigger-uninstall-reach-interrupt")
	s.update("update-trigger-uninstall.yaml")
	s.assertInline(1)
	s.assertInline(2)

	s.step("cancel-during-interrupt")
	s.update("update-cancel-uninstall.yaml")
	s.assertInline(3)
	s.assertInline(4)

	s.step("cycle-completes-condition-cleared")
	s.assertInline(5)
	s.assertInline(6)

	s.step("drain-uninstall-before-cleanup")
	s.update("update-trigger-uninstall.yaml")
	s.assertInline(7)
	s.assertInline(8)
}

// uninstallCancelDuringInterruptResources are the resources of upstream's
// uninstall-cancel-during-interrupt chainsaw-test.yaml assert steps, in order.
var uninstallCancelDuringInterruptResources = []string{
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-cancel-during-interrupt
status:
  status: complete
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
  annotations:
    (parse_json("skyhook.nvidia.com/nodeState_uninstall-cancel-during-interrupt")."mypkg|2.1.4".stage == 'uninstall-interrupt'): true
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-cancel-during-interrupt
status:
  (conditions[?type == 'UninstallInProgress']):
  - status: "True"
    reason: "UninstallInProgress"
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
  annotations:
    (parse_json("skyhook.nvidia.com/nodeState_uninstall-cancel-during-interrupt")."mypkg|2.1.4".stage == 'uninstall-interrupt'): true
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-cancel-during-interrupt
status:
  (conditions[?type == 'UninstallInProgress']):
  - status: "True"
    reason: "UninstallInProgress"
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_uninstall-cancel-during-interrupt: complete
  annotations:
    ("skyhook.nvidia.com/nodeState_uninstall-cancel-during-interrupt" && parse_json("skyhook.nvidia.com/nodeState_uninstall-cancel-during-interrupt")):
      {
        "mypkg|2.1.4": {
            "name": "mypkg",
            "version": "2.1.4",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        }
      }
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-cancel-during-interrupt
status:
  status: complete
  (length(conditions[?type == 'UninstallInProgress']) == ` + "`" + `0` + "`" + `): true
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
  annotations:
    skyhook.nvidia.com/nodeState_uninstall-cancel-during-interrupt: '{}'
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-cancel-during-interrupt
status:
  status: complete
`,
}
