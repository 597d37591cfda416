package upstreame2e

import "testing"

// nodewright/depends-on: the v0.20 counterpart of skyhook/depends-on,
// running the same body (dependsOn) on NodeWright v0.20's files: cc-last
// depends on aa-fast and bb-slow (which sleeps ten times longer); upstream
// watches each apply and config pod appear in dependency order, then the
// NodeWright complete.
func TestNodeWrightDependsOn(t *testing.T) {
	dependsOn(newScenario(t, "nodewright/depends-on"))
}

// nodeWrightDependsOnResources are the resources of upstream's v0.20
// nodewright/depends-on chainsaw-test.yaml assert steps, in order: the apply
// and config pods of aa-fast, bb-slow and cc-last (NodeWright's stage pod
// shape, skipped), then the NodeWright complete.
var nodeWrightDependsOnResources = []string{
	nodeWrightDependsOnPod("aa-fast", "1.2.3", "apply"),
	nodeWrightDependsOnPod("bb-slow", "1.2", "apply"),
	nodeWrightDependsOnPod("aa-fast", "1.2.3", "config"),
	nodeWrightDependsOnPod("bb-slow", "1.2", "config"),
	nodeWrightDependsOnPod("cc-last", "5.4.3", "apply"),
	nodeWrightDependsOnPod("cc-last", "5.4.3", "config"),
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: depends-on
status:
  status: complete
  nodeState:
    (values(@)):
      - aa-fast|1.2.3:
          image: ghcr.io/nvidia/skyhook/agentless
          name: aa-fast
          stage: config
          state: complete
          version: 1.2.3
        bb-slow|1.2:
          image: ghcr.io/nvidia/skyhook/agentless
          name: bb-slow
          stage: config
          state: complete
          version: "1.2"
        cc-last|5.4.3:
          image: ghcr.io/nvidia/skyhook/agentless
          name: cc-last
          stage: config
          state: complete
          version: 5.4.3
  nodeStatus:
    (values(@)):
      - complete
`,
}

func nodeWrightDependsOnPod(pkg, version, stage string) string {
	return `
kind: Pod
apiVersion: v1
metadata:
  namespace: nodewright
  labels:
    nodewright.nvidia.com/name: depends-on
    nodewright.nvidia.com/package: ` + pkg + `-` + version + `
  annotations:
    ("nodewright.nvidia.com/package" && parse_json("nodewright.nvidia.com/package")):
      {
        "name": "` + pkg + `",
        "version": "` + version + `",
        "skyhook": "depends-on",
        "stage": "` + stage + `",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
`
}
