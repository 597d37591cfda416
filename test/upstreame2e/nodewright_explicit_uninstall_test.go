package upstreame2e

import "testing"

// reasonExplicitUninstallRemoveMissing says why
// nodewright/explicit-uninstall's last step is not run.
const reasonExplicitUninstallRemoveMissing = "its manifest nodewright/explicit-uninstall/update-remove-package.yaml is in no " +
	"stored version of NodeWright's files (test/reference/nodewright/README.md), so the step that applies it " +
	"(remove-from-spec) and asserts the NodeWright complete with no packages is not run; skyhook/explicit-uninstall's " +
	"remove-from-spec runs it for the Skyhook kind"

// nodewright/explicit-uninstall: the v0.20 counterpart of
// skyhook/explicit-uninstall, running the same body (explicitUninstall) on
// NodeWright v0.20's files: uninstall.apply runs the package's uninstall
// with its configMap and env, then its interrupt (a reboot, the node
// cordoned), and drops its record. Its last step, the package leaving the
// spec, is not run (reasonExplicitUninstallRemoveMissing).
func TestNodeWrightExplicitUninstall(t *testing.T) {
	explicitUninstall(newScenario(t, "nodewright/explicit-uninstall"))
}

// nodeWrightExplicitUninstallResources are the resources of upstream's
// explicit-uninstall chainsaw-test.yaml assert steps, in order.
var nodeWrightExplicitUninstallResources = []string{
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
    nodewright.nvidia.com/status_explicit-uninstall: complete
  annotations:
    ("nodewright.nvidia.com/nodeState_explicit-uninstall" && parse_json("nodewright.nvidia.com/nodeState_explicit-uninstall")):
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
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
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
    nodewright.nvidia.com/name: explicit-uninstall
    nodewright.nvidia.com/package: mypkg-2.1.4
  annotations:
    ("nodewright.nvidia.com/package" && parse_json("nodewright.nvidia.com/package")):
      {
        "name": "mypkg",
        "version": "2.1.4",
        "skyhook": "explicit-uninstall",
        "stage": "uninstall",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
spec:
  ## configmap from nodewright.yaml is mounted as a volume on the pod
  ((volumes[?name == 'mypkg'].configMap.name)[0] == 'explicit-uninstall-mypkg-2.1.4'): true
  initContainers:
    - name: mypkg-init
      ## init container mounts each configMap key as its own subPath so scripts
      ## land in /root at copy time and image-baked files under
      ## /skyhook-package/configmaps are not clobbered (issue #208)
      ((volumeMounts[?name == 'mypkg' && subPath == 'install.sh'].mountPath)[0] == '/skyhook-package/configmaps/install.sh'): true
      ((volumeMounts[?name == 'mypkg' && subPath == 'uninstall.sh'].mountPath)[0] == '/skyhook-package/configmaps/uninstall.sh'): true
    - name: mypkg-uninstall
      args:
        ([0]): uninstall
      ## user-supplied env var from nodewright.yaml is propagated to the uninstall container
      ((env[?name == 'MY_VAR'].value)[0] == 'hello'): true
      ((volumeMounts[?name == 'mypkg' && subPath == 'install.sh'].mountPath)[0] == '/skyhook-package/configmaps/install.sh'): true
      ((volumeMounts[?name == 'mypkg' && subPath == 'uninstall.sh'].mountPath)[0] == '/skyhook-package/configmaps/uninstall.sh'): true
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
    nodewright.nvidia.com/test-node: skyhooke2e
  annotations:
    ("nodewright.nvidia.com/nodeState_explicit-uninstall" && parse_json("nodewright.nvidia.com/nodeState_explicit-uninstall")):
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
    nodewright.nvidia.com/name: explicit-uninstall
    nodewright.nvidia.com/interrupt: "True"
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    nodewright.nvidia.com/test-node: skyhooke2e
  annotations:
    nodewright.nvidia.com/nodeState_explicit-uninstall: '{}'
`,
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: explicit-uninstall
status:
  status: complete
  completeNodes: 1/1
`,
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: explicit-uninstall
status:
  status: complete
  packageList: ""
`,
}
