package upstreame2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// skyhook/uninstall-on-delete: deleting a Skyhook uninstalls its
// uninstall.enabled package from the node before the finalizer lets go; the
// record of the package without uninstall support stays on the node.
func TestSkyhookUninstallOnDelete(t *testing.T) {
	uninstallOnDelete(newScenario(t, "skyhook/uninstall-on-delete"))
}

// uninstallOnDelete is the body of skyhook/uninstall-on-delete and of its
// v0.20 twin nodewright/uninstall-on-delete, for the scenario's kind.
func uninstallOnDelete(s *scenario) {
	const name = "uninstall-on-delete"
	pods := recordStagePodsOf(s.t, s.kind, name)

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create(s.rolloutFile())
	s.assertInline(0)

	s.step("delete-cr")
	_, _ = s.kubectl("delete", s.resource(), name, "--wait=false")
	s.assertInline(1) // NodeWright's uninstall pod shape (skipped); its counterpart:
	checkUninstallPod(s, pods.wait(s, "enabled-pkg", skyhookv1.StageUninstall), "2.1.4")
	s.waitGone(name, assertTimeout)
	s.assertInline(2)
	// Upstream's README: no uninstall pod for the package without
	// uninstall support.
	if pod := pods.get("disabled-pkg", skyhookv1.StageUninstall); pod != nil {
		s.t.Errorf("an uninstall pod ran for disabled-pkg (uninstall not enabled): %s", pod.Name)
	}
}

// checkUninstallPod checks what upstream's uninstall pod asserts look for
// on this operator's uninstall pod of a package: its version, and an
// uninstall container then an uninstall-check container, run in those
// modes.
func checkUninstallPod(s *scenario, pod *corev1.Pod, version string) {
	s.t.Helper()
	if pod == nil {
		return
	}
	if got := pod.Annotations[stagepod.VersionAnnotation]; got != version {
		s.t.Errorf("uninstall pod %s is for version %q, want %s", pod.Name, got, version)
	}
	for _, mode := range []string{"uninstall", "uninstall-check"} {
		c := initContainer(pod, stagepod.PackageOf(pod)+"-"+strings.Replace(mode, "-check", "check", 1))
		if c == nil || len(c.Args) == 0 || c.Args[0] != mode {
			s.t.Errorf("uninstall pod %s: no %s container run with args[0] %q (init containers %v)", pod.Name, mode, mode, pod.Spec.InitContainers)
		}
	}
	s.t.Logf("holds (counterpart): uninstall pod %s for version %s with uninstall and uninstall-check containers", pod.Name, version)
}

// uninstallOnDeleteResources are the resources of upstream's
// uninstall-on-delete chainsaw-test.yaml assert steps, in order.
var uninstallOnDeleteResources = []string{
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: uninstall-on-delete
status:
  status: complete
`,
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: uninstall-on-delete
    skyhook.nvidia.com/package: enabled-pkg-2.1.4
spec:
  initContainers:
    - name: enabled-pkg-init
    - name: enabled-pkg-uninstall
      args:
        ([0]): uninstall
    - name: enabled-pkg-uninstallcheck
      args:
        ([0]): uninstall-check
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
  annotations:
    (parse_json("skyhook.nvidia.com/nodeState_uninstall-on-delete")."disabled-pkg|2.1.4".name == 'disabled-pkg'): true
    (parse_json("skyhook.nvidia.com/nodeState_uninstall-on-delete")."disabled-pkg|2.1.4".stage == 'config'): true
    (parse_json("skyhook.nvidia.com/nodeState_uninstall-on-delete")."disabled-pkg|2.1.4".state == 'complete'): true
`,
}
