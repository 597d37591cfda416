package upstreame2e

import "testing"

// skyhook/downgrade-after-uninstall: a package with uninstall support,
// once uninstalled from every node, can be downgraded, and the older
// version installs afresh.
func TestSkyhookDowngradeAfterUninstall(t *testing.T) {
	s := newScenario(t, "skyhook/downgrade-after-uninstall")
	const name = "downgrade-after-uninstall"

	s.step("install-v2")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create("skyhook.yaml")
	s.assertInline(0)

	s.step("uninstall")
	s.update("update-trigger-uninstall.yaml")
	s.assertInline(1)

	s.step("downgrade")
	s.update("update-downgrade.yaml")
	s.assertInline(2)
	s.assertInline(3)
}

// downgradeAfterUninstallResources are the resources of upstream's
// downgrade-after-uninstall chainsaw-test.yaml assert steps, in order.
var downgradeAfterUninstallResources = []string{
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: downgrade-after-uninstall
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
    skyhook.nvidia.com/nodeState_downgrade-after-uninstall: '{}'
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
  annotations:
    ("skyhook.nvidia.com/nodeState_downgrade-after-uninstall" && parse_json("skyhook.nvidia.com/nodeState_downgrade-after-uninstall")):
      {
        "mypkg|1.2.3": {
            "name": "mypkg",
            "version": "1.2.3",
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
  name: downgrade-after-uninstall
status:
  status: complete
`,
}
