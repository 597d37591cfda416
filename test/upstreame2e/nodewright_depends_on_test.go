package upstreame2e

import (
	"slices"
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// nodewright/depends-on: skyhook/depends-on for the NodeWright kind
// (NodeWright v0.20's files): cc-last depends on aa-fast and bb-slow (which
// sleeps ten times longer); upstream watches each apply and config pod
// appear in dependency order, then the NodeWright complete.
func TestNodeWrightDependsOn(t *testing.T) {
	s := newScenario(t, "nodewright/depends-on")
	// Upstream's pod asserts are NodeWright's pod shape (skipped); what
	// they watch for, the order of the stages, is checked on this
	// operator's stage pods.
	order := watchStagePodsOfKind(t, skyhookv1.NodeWrights, "depends-on")

	s.step("setup")
	_, _ = s.cli("reset", "depends-on", "--confirm") // upstream: || true
	s.create("nodewright.yaml")
	for i := range nodeWrightDependsOnResources {
		s.assertInline(i)
	}

	seen := order()
	t.Logf("stage pods in the order they appeared: %v", seen)
	at := func(stage string) int { return slices.Index(seen, stage) }
	for _, pkg := range []string{"aa-fast", "bb-slow", "cc-last"} {
		if at(pkg+" apply") < 0 || at(pkg+" apply") > at(pkg+" config") {
			t.Errorf("%s: apply and config pods %v, want apply then config", pkg, seen)
		}
	}
	if at("cc-last apply") < at("aa-fast config") || at("cc-last apply") < at("bb-slow config") {
		t.Errorf("cc-last started before the packages it depends on were configured: %v", seen)
	}
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
