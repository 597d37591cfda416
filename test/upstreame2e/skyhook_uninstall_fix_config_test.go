package upstreame2e

import "testing"

// skyhook/uninstall-fix-config: an uninstall that fails (EXIT_CODE 1)
// leaves the package erroring in its uninstall stage with UninstallFailed;
// fixing the package's env in the spec lets the uninstall succeed, and the
// condition goes.
func TestSkyhookUninstallFixConfig(t *testing.T) {
	s := newScenario(t, "skyhook/uninstall-fix-config")
	const name = "uninstall-fix-config"

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create("skyhook.yaml")
	s.assertInline(0)

	s.step("trigger-failing-uninstall")
	s.update("update-trigger-uninstall.yaml")
	s.assertInline(1)
	s.assertInline(2)

	s.step("fix-config")
	s.update("update-fix-uninstall.yaml")
	s.assertInline(3)
	s.assertInline(4)
}

// uninstallFixConfigResources are the resources of upstream's
// uninstall-fix-config chainsaw-test.yaml assert steps, in order.
var uninstallFixConfigResources = []string{
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-fix-config
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
    (parse_json("skyhook.nvidia.com/nodeState_uninstall-fix-config")."mypkg|2.1.4".name == 'mypkg'): true
    (parse_json("skyhook.nvidia.com/nodeState_uninstall-fix-config")."mypkg|2.1.4".stage == 'uninstall'): true
    (parse_json("skyhook.nvidia.com/nodeState_uninstall-fix-config")."mypkg|2.1.4".state == 'erroring'): true
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-fix-config
status:
  (conditions[?type == 'UninstallFailed']):
  - status: "True"
    reason: "UninstallPodFailing"
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
  annotations:
    skyhook.nvidia.com/nodeState_uninstall-fix-config: '{}'
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-fix-config
status:
  status: complete
  (length(conditions[?type == 'UninstallFailed']) == ` + "`" + `0` + "`" + `): true
`,
}
