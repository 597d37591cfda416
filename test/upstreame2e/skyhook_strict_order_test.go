package upstreame2e

import (
	"testing"
	"time"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// skyhook/strict-order: six Skyhooks on two workers, by priority: zzz (1),
// gate (2, sequencing all), then aa, b (paused), c and d (disabled) (3).
// kind-worker2 is blocked by a taint: kind-worker goes through zzz and
// gate and waits at the gate for kind-worker2; untainted, kind-worker2
// catches up; both pass the gate, b stays paused until unpaused, then
// everything completes but d.
func TestSkyhookStrictOrder(t *testing.T) {
	s := newScenario(t, "skyhook/strict-order")
	pods := watchStagePodsOf(t, "strict-order-skyhook-zzz")
	const label = "skyhook.nvidia.com/strict-order-test=true"
	skyhooks := []string{"zzz", "gate", "aa", "b", "c", "d"}

	s.step("setup-and-block-node2")
	for _, name := range skyhooks {
		_, _ = s.cli("reset", "strict-order-skyhook-"+name, "--confirm") // upstream: || true
	}
	s.labelNode("kind-worker", label)
	s.labelNode("kind-worker2", label)
	s.taintNode("kind-worker2", "test-block=true:NoSchedule")
	defer s.untaintNode("kind-worker2", "test-block-") // finally

	s.step("apply-skyhooks")
	s.apply("skyhook.yaml")
	var targets []string
	for _, name := range skyhooks {
		targets = append(targets, "skyhook_node_target_count 2 -t skyhook_name=strict-order-skyhook-"+name)
	}
	s.metricsScript(append(targets,
		"skyhook_status 1 -t skyhook_name=strict-order-skyhook-d -t status=disabled",
		"skyhook_status 1 -t skyhook_name=strict-order-skyhook-b -t status=paused",
	)...)

	s.step("assert-worker-priority2-worker2-blocked")
	s.sleep(5 * time.Second)
	s.assertInline(0) // zzz's config pod on kind-worker, SKYHOOK_NODE_ORDER 0 (NodeWright's pod shape: skipped, checked below)
	s.assert("assert-node1-priority1-complete-node2-blocked.yaml")
	s.metricsScript(
		"skyhook_node_status_count 1 -t skyhook_name=strict-order-skyhook-zzz -t status=complete",
		"skyhook_node_status_count 1 -t skyhook_name=strict-order-skyhook-zzz -t status=blocked",
		"skyhook_package_state_count 1 -t package_name=foobar -t package_version=1.2 -t skyhook_name=strict-order-skyhook-zzz -t state=complete",
	)
	checkNodeOrder(t, pods, "kind-worker", "0")

	s.step("unblock-worker2")
	s.assert("assert-gate-blocks-worker.yaml")
	s.untaintNode("kind-worker2", "test-block-")
	s.assertInline(1) // zzz's config pod on kind-worker2, SKYHOOK_NODE_ORDER 1 (skipped, checked below)

	s.step("assert-gate-blocks-worker")
	s.metricsScript(
		"skyhook_status 1 -t skyhook_name=strict-order-skyhook-b -t status=paused",
		"skyhook_status 1 -t skyhook_name=strict-order-skyhook-aa -t status=waiting",
	)
	s.assertInline(2) // kind-worker2 at the gate, aa waiting
	s.assertInline(3) // kind-worker through the gate, aa waiting
	s.assertInline(4) // kind-worker at aa
	s.assertInline(5) // kind-worker2 at aa
	checkNodeOrder(t, pods, "kind-worker2", "1")

	s.step("assert-gate-released-b-paused")
	s.assert("assert-gate-released-b-paused.yaml")
	s.sleep(5 * time.Second)
	s.assert("assert-gate-released-b-paused.yaml")
	s.metricsScript(
		"skyhook_node_status_count 2 -t skyhook_name=strict-order-skyhook-gate -t status=complete",
		"skyhook_status 1 -t skyhook_name=strict-order-skyhook-b -t status=paused",
	)

	s.step("unpause-b")
	s.patch("skyhook-pause-update.yaml")

	s.step("assert-both-nodes-complete")
	s.assert("assert-both-nodes-complete.yaml")
	var final []string
	for _, name := range []string{"zzz", "gate", "aa", "b", "c"} {
		final = append(final, "skyhook_node_status_count 2 -t skyhook_name=strict-order-skyhook-"+name+" -t status=complete")
	}
	final = append(final, "skyhook_status 1 -t skyhook_name=strict-order-skyhook-d -t status=disabled")
	for _, name := range []string{"zzz", "gate", "aa", "b", "c"} {
		final = append(final, "skyhook_package_state_count 2 -t package_name=foobar -t package_version=1.2 -t skyhook_name=strict-order-skyhook-"+name+" -t state=complete")
	}
	s.metricsScript(final...)
}

// checkNodeOrder is what upstream's skipped pod asserts look for: zzz's
// config stage on the node got SKYHOOK_NODE_ORDER, the node's place in the
// rollout, in both its containers.
func checkNodeOrder(t *testing.T, pods *stagePodLog, node, want string) {
	t.Helper()
	p, ok := pods.find(func(p stagePod) bool { return p.Node == node && p.Package == "foobar" && p.Stage == "config" })
	if !ok {
		t.Errorf("no config pod of strict-order-skyhook-zzz on %s", node)
		return
	}
	for _, c := range []string{stagepod.StageContainer("foobar", skyhookv1.StageConfig), stagepod.CheckContainer("foobar", skyhookv1.StageConfig)} {
		if got, _ := p.env(c, "SKYHOOK_NODE_ORDER"); got != want {
			t.Errorf("%s: container %s has SKYHOOK_NODE_ORDER %q, want %q", p, c, got, want)
		}
	}
}

// strictOrderResources are the resources of upstream's strict-order
// chainsaw-test.yaml assert steps, in order.
var strictOrderResources = []string{
	// #0 assert
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: strict-order-skyhook-zzz
    skyhook.nvidia.com/package: foobar-1.2
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package")):
      {
        "name": "foobar",
        "version": "1.2",
        "skyhook": "strict-order-skyhook-zzz",
        "stage": "config",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
spec:
  nodeName: kind-worker
  initContainers:
    - name: foobar-init
    - name: foobar-config
      env:
        ([5]):
          name: SKYHOOK_NODE_ORDER
          value: "0"
    - name: foobar-configcheck
      env:
        ([5]):
          name: SKYHOOK_NODE_ORDER
          value: "0"
`,
	// #1 assert
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: strict-order-skyhook-zzz
    skyhook.nvidia.com/package: foobar-1.2
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package")):
      {
        "name": "foobar",
        "version": "1.2",
        "skyhook": "strict-order-skyhook-zzz",
        "stage": "config",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
spec:
  nodeName: kind-worker2
  initContainers:
    - name: foobar-init
    - name: foobar-config
      env:
        ([5]):
          name: SKYHOOK_NODE_ORDER
          value: "1"
    - name: foobar-configcheck
      env:
        ([5]):
          name: SKYHOOK_NODE_ORDER
          value: "1"
`,
	// #2 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker2
  annotations:
    skyhook.nvidia.com/status_strict-order-skyhook-zzz: complete
    skyhook.nvidia.com/status_strict-order-skyhook-gate: in_progress
    skyhook.nvidia.com/status_strict-order-skyhook-aa: waiting
    skyhook.nvidia.com/status_strict-order-skyhook-b: paused
`,
	// #3 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  annotations:
    skyhook.nvidia.com/status_strict-order-skyhook-zzz: complete
    skyhook.nvidia.com/status_strict-order-skyhook-gate: complete
    skyhook.nvidia.com/status_strict-order-skyhook-aa: waiting
    skyhook.nvidia.com/status_strict-order-skyhook-b: paused
`,
	// #4 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  annotations:
    skyhook.nvidia.com/status_strict-order-skyhook-zzz: complete
    skyhook.nvidia.com/status_strict-order-skyhook-gate: complete
    skyhook.nvidia.com/status_strict-order-skyhook-aa: in_progress
    skyhook.nvidia.com/status_strict-order-skyhook-b: paused
`,
	// #5 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker2
  labels:
    skyhook.nvidia.com/strict-order-test: "true"
  annotations:
    skyhook.nvidia.com/status_strict-order-skyhook-zzz: complete
    skyhook.nvidia.com/status_strict-order-skyhook-gate: complete
    skyhook.nvidia.com/status_strict-order-skyhook-aa: in_progress
    skyhook.nvidia.com/status_strict-order-skyhook-b: paused
`,
}
