package upstreame2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// skyhook/explicit-uninstall: uninstall.apply runs the package's uninstall
// with its configMap and env, then its interrupt (a reboot, the node
// cordoned), and drops its record; the package can then leave the spec.
func TestSkyhookExplicitUninstall(t *testing.T) {
	explicitUninstall(newScenario(t, "skyhook/explicit-uninstall"))
}

// explicitUninstall is the body of skyhook/explicit-uninstall and of its
// v0.20 twin nodewright/explicit-uninstall, for the scenario's kind; the
// twin's last step is not run (reasonExplicitUninstallRemoveMissing).
func explicitUninstall(s *scenario) {
	const name = "explicit-uninstall"
	pods := recordStagePodsOf(s.t, s.kind, name)

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create(s.rolloutFile())
	s.assertInline(0)
	s.assertInline(1)

	s.step("trigger-uninstall")
	s.update("update-trigger-uninstall.yaml")
	s.assertInline(2) // NodeWright's uninstall pod shape (skipped); its counterpart:
	if pod := pods.wait(s, "mypkg", skyhookv1.StageUninstall); pod != nil {
		checkUninstallPod(s, pod, "2.1.4")
		checkPackageConfig(s, pod, "uninstall.sh", "MY_VAR", "hello")
	}
	s.assertInline(3)
	// The interrupt pod by NodeWright's labels (name, interrupt=True), which
	// this operator's stage pods carry; and that it is the uninstall's.
	s.assertInline(4)
	if pod := pods.wait(s, "mypkg", skyhookv1.StageUninstallInterrupt); pod != nil {
		s.t.Logf("holds: interrupt pod %s is the uninstall's", pod.Name)
	}
	s.assertInline(5)
	s.assertInline(6)

	s.step("remove-from-spec")
	if s.kind == skyhookv1.NodeWrights {
		// Upstream's v0.20 explicit-uninstall has no stored
		// update-remove-package.yaml.
		s.t.Logf("skipped: %s", reasonExplicitUninstallRemoveMissing)
		return
	}
	s.update("update-remove-package.yaml")
	s.assertInline(7)
}

// checkPackageConfig checks what upstream's uninstall pod assert looks for
// besides its shape: the package's configMap (holding key) mounted where
// the steps read it, and its env var, in the uninstall and uninstall-check
// containers.
func checkPackageConfig(s *scenario, pod *corev1.Pod, key, envName, envValue string) {
	s.t.Helper()
	var configMap string
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil {
			configMap = v.ConfigMap.Name
		}
	}
	var cm corev1.ConfigMap
	if err := s.client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: configMap}, &cm); err != nil || cm.Data[key] == "" {
		s.t.Errorf("uninstall pod %s: no ConfigMap volume with the package's %s (volume of ConfigMap %q: %v)", pod.Name, key, configMap, err)
	}
	for _, name := range []string{stagepod.StageContainer(stagepod.PackageOf(pod), skyhookv1.StageUninstall), stagepod.CheckContainer(stagepod.PackageOf(pod), skyhookv1.StageUninstall)} {
		c := initContainer(pod, name)
		if c == nil {
			continue // checkUninstallPod reports it
		}
		mounted := false
		for _, m := range c.VolumeMounts {
			mounted = mounted || m.MountPath == "/skyhook-package/configmaps"
		}
		value := ""
		for _, e := range c.Env {
			if e.Name == envName {
				value = e.Value
			}
		}
		if !mounted || value != envValue {
			s.t.Errorf("uninstall pod %s, container %s: configMap mounted at /skyhook-package/configmaps %t, %s=%q; want mounted and %q",
				pod.Name, name, mounted, envName, value, envValue)
		}
	}
	s.t.Logf("holds (counterpart): uninstall pod %s mounts ConfigMap %s (%s) and has %s=%s", pod.Name, configMap, key, envName, envValue)
}

// explicitUninstallResources are the resources of upstream's
// explicit-uninstall chainsaw-test.yaml assert steps, in order.
var explicitUninstallResources = []string{
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_explicit-uninstall: complete
  annotations:
    ("skyhook.nvidia.com/nodeState_explicit-uninstall" && parse_json("skyhook.nvidia.com/nodeState_explicit-uninstall")):
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
  name: explicit-uninstall
status:
  status: complete
`,
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: explicit-uninstall
    skyhook.nvidia.com/package: mypkg-2.1.4
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package")):
      {
        "name": "mypkg",
        "version": "2.1.4",
        "skyhook": "explicit-uninstall",
        "stage": "uninstall",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
spec:
  ((volumes[?name == 'mypkg'].configMap.name)[0] == 'explicit-uninstall-mypkg-2.1.4'): true
  initContainers:
    - name: mypkg-init
      ((volumeMounts[?name == 'mypkg'].mountPath)[0] == '/skyhook-package/configmaps'): true
    - name: mypkg-uninstall
      args:
        ([0]): uninstall
      ((env[?name == 'MY_VAR'].value)[0] == 'hello'): true
      ((volumeMounts[?name == 'mypkg'].mountPath)[0] == '/skyhook-package/configmaps'): true
    - name: mypkg-uninstallcheck
      args:
        ([0]): uninstall-check
      ((env[?name == 'MY_VAR'].value)[0] == 'hello'): true
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
  annotations:
    ("skyhook.nvidia.com/nodeState_explicit-uninstall" && parse_json("skyhook.nvidia.com/nodeState_explicit-uninstall")):
      {
        "mypkg|2.1.4": {
            "name": "mypkg",
            "version": "2.1.4",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "uninstall-interrupt",
            "state": "in_progress"
        }
      }
spec:
  taints:
  - effect: NoSchedule
    key: node.kubernetes.io/unschedulable
`,
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: explicit-uninstall
    skyhook.nvidia.com/interrupt: "True"
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
  annotations:
    skyhook.nvidia.com/nodeState_explicit-uninstall: '{}'
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: explicit-uninstall
status:
  status: complete
  completeNodes: 1/1
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: explicit-uninstall
status:
  status: complete
  packageList: ""
`,
}
