package upstreame2e

import (
	"slices"
	"testing"
)

// skyhook/runtime-required: both workers carry the runtime-required taint;
// kind-worker2 is also tainted test-block, which the Skyhook does not
// tolerate. kind-worker completes and loses its runtime-required taint
// while kind-worker2, blocked, keeps it; untainted, kind-worker2 completes
// and loses it too.
func TestSkyhookRuntimeRequired(t *testing.T) {
	runtimeRequired(newScenario(t, "skyhook/runtime-required"))
}

// runtimeRequired is the body of skyhook/runtime-required and of its v0.20
// twin nodewright/runtime-required, for the scenario's kind: the nodes'
// label is under the kind's prefix, the taint under skyhook.nvidia.com in
// both (upstream's v0.20 steps keep the legacy taint, which v0.20 still
// recognises and removes for a NodeWright).
func runtimeRequired(s *scenario) {
	pods := watchRolloutStagePods(s.t, s.kind, "runtime-required")
	label := s.key("runtime-required-test=true")

	s.step("setup-and-block-node2")
	_, _ = s.cli("reset", "runtime-required", "--confirm") // upstream: || true
	s.labelNode("kind-worker", label)
	s.labelNode("kind-worker2", label)
	s.taintNodes("all", "skyhook.nvidia.com=runtime-required:NoSchedule", label)
	defer s.untaintNodes("all", "skyhook.nvidia.com=runtime-required:NoSchedule", label) // finally
	s.taintNode("kind-worker2", "test-block=true:NoSchedule")

	s.step("apply-skyhook")
	s.createInline(0)

	s.step("assert-node1-complete-node2-blocked")
	s.assertInline(1) // apply pod on kind-worker (NodeWright's pod shape: skipped, checked below)
	s.assertInline(2) // config pod on kind-worker (likewise)
	s.assertInline(3) // kind-worker complete, its runtime-required taint gone
	s.assertInline(4) // kind-worker2 blocked, its taints kept
	checkStages(s.t, pods, "kind-worker", "spencer", "apply", "config")

	s.step("unblock-node2")
	s.untaintNode("kind-worker2", "test-block-")

	s.step("assert-node2-complete")
	s.assertInline(5) // apply pod on kind-worker2 (skipped, checked below)
	s.assertInline(6) // config pod on kind-worker2 (likewise)
	s.assertInline(7) // kind-worker2 complete, its runtime-required taint gone
	checkStages(s.t, pods, "kind-worker2", "spencer", "apply", "config")

	s.step("assert-final-state")
	s.assertInline(8)
}

// checkStages is what upstream's skipped pod asserts look for: the
// package's stage pods for those stages appeared on the node, in that
// order.
func checkStages(t *testing.T, pods *stagePodLog, node, pkg string, stages ...string) {
	t.Helper()
	var seen []string
	for _, p := range pods.all() {
		if p.Node == node && p.Package == pkg && !slices.Contains(seen, p.Stage) {
			seen = append(seen, p.Stage)
		}
	}
	at := -1
	for _, stage := range stages {
		i := slices.Index(seen, stage)
		if i < 0 || i < at {
			t.Errorf("%s's stage pods on %s: %v, want %v in that order", pkg, node, seen, stages)
			return
		}
		at = i
	}
	t.Logf("%s's stage pods on %s: %v", pkg, node, seen)
}

// runtimeRequiredResources are the resources of upstream's runtime-required
// chainsaw-test.yaml, in order: the Skyhook it creates, then its asserts.
var runtimeRequiredResources = []string{
	// #0 create
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  labels:
    app.kubernetes.io/part-of: skyhook-operator
    app.kubernetes.io/created-by: skyhook-operator
  name: runtime-required
spec:
  runtimeRequired: true
  nodeSelectors:
    matchLabels:
      skyhook.nvidia.com/runtime-required-test: "true"
  packages:
    spencer:
      version: "3.2.3"
      image: ghcr.io/nvidia/skyhook/agentless
      env: 
        - name: SLEEP_LEN
          value: "2"
`,
	// #1 assert
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: runtime-required
    skyhook.nvidia.com/package: spencer-3.2.3
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package").stage == 'apply'): true
spec:
  nodeName: kind-worker
`,
	// #2 assert
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: runtime-required
    skyhook.nvidia.com/package: spencer-3.2.3
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package").stage == 'config'): true
spec:
  nodeName: kind-worker
`,
	// #3 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  labels:
    skyhook.nvidia.com/status_runtime-required: complete
  annotations:
    skyhook.nvidia.com/status_runtime-required: complete
spec:
  (!taints || length(taints[?key == 'skyhook.nvidia.com' && effect == 'NoSchedule' && value == 'runtime-required'])==` + "`" + `0` + "`" + `): true
`,
	// #4 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker2
  labels:
    skyhook.nvidia.com/status_runtime-required: blocked
  annotations:
    skyhook.nvidia.com/status_runtime-required: blocked
spec:
  taints:
  - key: test-block
    value: "true"
    effect: NoSchedule
  - key: skyhook.nvidia.com
    value: runtime-required
    effect: NoSchedule
`,
	// #5 assert
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: runtime-required
    skyhook.nvidia.com/package: spencer-3.2.3
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package").stage == 'apply'): true
spec:
  nodeName: kind-worker2
`,
	// #6 assert
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: runtime-required
    skyhook.nvidia.com/package: spencer-3.2.3
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package").stage == 'config'): true
spec:
  nodeName: kind-worker2
`,
	// #7 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker2
  labels:
    skyhook.nvidia.com/status_runtime-required: complete
  annotations:
    skyhook.nvidia.com/status_runtime-required: complete
spec:
  (!taints || length(taints[?key == 'skyhook.nvidia.com' && effect == 'NoSchedule' && value == 'runtime-required'])==` + "`" + `0` + "`" + `): true
`,
	// #8 assert
	`
# This assertion validates per-node runtime-required behavior:
# - Each node with the test label should have status=complete
# - Each node's runtime-required taint should be removed independently
# - Both kind-worker and kind-worker2 are tested (multi-node isolation)
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/runtime-required-test: "true"
    skyhook.nvidia.com/status_runtime-required: complete
  annotations:
    skyhook.nvidia.com/status_runtime-required: complete
spec:
  # Verify the runtime-required taint has been removed from this node
  (!taints || length(taints)==` + "`" + `0` + "`" + ` || length(taints[?key == 'skyhook.nvidia.com' && effect == 'NoSchedule'  && value == 'runtime-required'])==` + "`" + `0` + "`" + `): true
`,
}
