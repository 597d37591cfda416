package upstreame2e

import (
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// skyhook/uninstall-mixed-packages: uninstalling one package leaves the
// other installed; dropping from the spec the package without uninstall
// support keeps its record on the node.
func TestSkyhookUninstallMixedPackages(t *testing.T) {
	uninstallMixedPackages(newScenario(t, "skyhook/uninstall-mixed-packages"))
}

// uninstallMixedPackages is the body of skyhook/uninstall-mixed-packages
// and of its v0.20 twin nodewright/uninstall-mixed-packages, for the
// scenario's kind.
func uninstallMixedPackages(s *scenario) {
	const name = "uninstall-mixed-packages"
	pods := recordStagePodsOf(s.t, s.kind, name)

	s.step("install-both")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create(s.rolloutFile())
	s.assertInline(0)

	s.step("uninstall-one")
	s.update("update-uninstall-one.yaml")
	s.assertInline(1) // NodeWright's uninstall pod shape (skipped); its counterpart:
	checkUninstallPod(s, pods.wait(s, "pkg-remove", skyhookv1.StageUninstall), "2.1.4")
	s.assertInline(2)

	s.step("remove-pkg-keep-from-spec")
	s.update("update-remove-keep.yaml")
	s.assertInline(3)
	s.assertInline(4)
}

// uninstallMixedPackagesResources are the resources of upstream's
// uninstall-mixed-packages chainsaw-test.yaml assert steps, in order.
var uninstallMixedPackagesResources = []string{
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-mixed-packages
status:
  status: complete
`,
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: uninstall-mixed-packages
    skyhook.nvidia.com/package: pkg-remove-2.1.4
spec:
  initContainers:
    - name: pkg-remove-init
    - name: pkg-remove-uninstall
      args:
        ([0]): uninstall
    - name: pkg-remove-uninstallcheck
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
  annotations:
    ("skyhook.nvidia.com/nodeState_uninstall-mixed-packages" && parse_json("skyhook.nvidia.com/nodeState_uninstall-mixed-packages")):
      {
        "pkg-keep|2.1.4": {
            "name": "pkg-keep",
            "version": "2.1.4",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        }
      }
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
  annotations:
    (parse_json("skyhook.nvidia.com/nodeState_uninstall-mixed-packages")."pkg-keep|2.1.4".name == 'pkg-keep'): true
    (parse_json("skyhook.nvidia.com/nodeState_uninstall-mixed-packages")."pkg-keep|2.1.4".stage == 'config'): true
    (parse_json("skyhook.nvidia.com/nodeState_uninstall-mixed-packages")."pkg-keep|2.1.4".state == 'complete'): true
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-mixed-packages
status:
  status: complete
`,
}
