package upstreame2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// nodewright/runtime-required-cordon-after (new in NodeWright v0.19): two
// runtimeRequired NodeWrights on kind-worker, which carries the legacy
// runtime-required taint, one with runtimeRequiredCordonAfter; once both
// are complete the taint is gone and the node cordoned with the
// runtimeRequiredCordon mark. A later NodeWright that interrupts leaves
// that cordon in place; an admin's uncordon (the mark left) has the
// operator drop the stale mark.
func TestNodeWrightRuntimeRequiredCordonAfter(t *testing.T) {
	s := newScenario(t, "nodewright/runtime-required-cordon-after")
	const label = "nodewright.nvidia.com/runtime-required-cordon-after-test=true"
	const mark = "nodewright.nvidia.com/runtimeRequiredCordon"
	uncordon := func(node *corev1.Node) {
		delete(node.Annotations, mark)
		node.Spec.Unschedulable = false
	}

	s.step("setup")
	for _, name := range []string{"runtime-required-cordon-after", "runtime-required-no-cordon", "runtime-required-cordon-after-interrupt"} {
		_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	}
	s.changeNode("kind-worker", uncordon)
	s.labelNode("kind-worker", label)
	s.taintNodes("all", "skyhook.nvidia.com=runtime-required:NoSchedule", label)
	defer s.changeNode("kind-worker", uncordon)                                          // finally
	defer s.untaintNodes("all", "skyhook.nvidia.com=runtime-required:NoSchedule", label) // finally

	s.step("apply-nodewrights")
	s.createInline(0) // runtimeRequiredCordonAfter: true
	s.createInline(1) // runtimeRequiredCordonAfter: false

	s.step("assert-nodewrights-complete")
	s.assertInline(2)

	s.step("assert-taint-removed-and-node-cordoned")
	s.assertInline(3)

	s.step("apply-interrupting-nodewright")
	s.createInline(4)

	s.step("assert-cordon-survives-interrupt")
	s.assertInline(5)

	s.step("release-cordon")
	s.changeNode("kind-worker", func(node *corev1.Node) { node.Spec.Unschedulable = false })

	s.step("assert-annotation-removed")
	s.assertInline(6)
}

// nodeWrightRuntimeRequiredCordonAfterResources are the resources of
// upstream's nodewright/runtime-required-cordon-after chainsaw-test.yaml,
// in order: the NodeWrights it creates and its asserts.
var nodeWrightRuntimeRequiredCordonAfterResources = []string{
	// #0 create
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  labels:
    app.kubernetes.io/part-of: skyhook-operator
    app.kubernetes.io/created-by: skyhook-operator
  name: runtime-required-cordon-after
spec:
  runtimeRequired: true
  runtimeRequiredCordonAfter: true
  nodeSelectors:
    matchLabels:
      nodewright.nvidia.com/runtime-required-cordon-after-test: "true"
  packages:
    spencer:
      version: "3.2.3"
      image: ghcr.io/nvidia/skyhook/agentless
      env:
        - name: SLEEP_LEN
          value: "2"
`,
	// #1 create
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  labels:
    app.kubernetes.io/part-of: skyhook-operator
    app.kubernetes.io/created-by: skyhook-operator
  name: runtime-required-no-cordon
spec:
  runtimeRequired: true
  runtimeRequiredCordonAfter: false
  nodeSelectors:
    matchLabels:
      nodewright.nvidia.com/runtime-required-cordon-after-test: "true"
  packages:
    casey:
      version: "3.2.3"
      image: ghcr.io/nvidia/skyhook/agentless
      env:
        - name: SLEEP_LEN
          value: "2"
`,
	// #2 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  labels:
    nodewright.nvidia.com/status_runtime-required-cordon-after: complete
    nodewright.nvidia.com/status_runtime-required-no-cordon: complete
  annotations:
    nodewright.nvidia.com/status_runtime-required-cordon-after: complete
    nodewright.nvidia.com/status_runtime-required-no-cordon: complete
`,
	// #3 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  annotations:
    nodewright.nvidia.com/runtimeRequiredCordon: "true"
spec:
  unschedulable: true
  (!taints || length(taints[?key == 'skyhook.nvidia.com' && effect == 'NoSchedule' && value == 'runtime-required'])==` + "`" + `0` + "`" + `): true
`,
	// #4 create
	`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  labels:
    app.kubernetes.io/part-of: skyhook-operator
    app.kubernetes.io/created-by: skyhook-operator
  name: runtime-required-cordon-after-interrupt
spec:
  nodeSelectors:
    matchLabels:
      nodewright.nvidia.com/runtime-required-cordon-after-test: "true"
  packages:
    hank:
      version: "1.2.3"
      image: ghcr.io/nvidia/skyhook/agentless
      interrupt:
        type: service
        services: [rsyslog]
      env:
        - name: SLEEP_LEN
          value: "2"
`,
	// #5 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  labels:
    nodewright.nvidia.com/status_runtime-required-cordon-after-interrupt: complete
  annotations:
    nodewright.nvidia.com/status_runtime-required-cordon-after-interrupt: complete
    nodewright.nvidia.com/runtimeRequiredCordon: "true"
spec:
  unschedulable: true
`,
	// #6 assert
	`
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  (annotations."nodewright.nvidia.com/runtimeRequiredCordon" == null): true
spec:
  (!unschedulable): true
`,
}
