package upstreame2e

import (
	"slices"
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// skyhook/interrupt-grouping: zeb restarts cron, dax restarts containerd
// and foobar; the node runs one interrupt for both, restarting the three
// services, and both packages complete at post-interrupt.
func TestSkyhookInterruptGrouping(t *testing.T) {
	interruptGrouping(newScenario(t, "skyhook/interrupt-grouping"))
}

// interruptGrouping is the body of skyhook/interrupt-grouping and of its
// v0.20 twin nodewright/interrupt-grouping, for the scenario's kind.
func interruptGrouping(s *scenario) {
	pods := watchRolloutStagePods(s.t, s.kind, "interrupt-grouping")

	s.step("grouping")
	_, _ = s.cli("reset", "interrupt-grouping", "--confirm") // upstream: || true
	s.create(s.rolloutFile())
	s.assertInline(0) // node in_progress, cordoned
	s.assertInline(1) // dax apply pod (NodeWright's pod shape: skipped, checked below)
	s.assertInline(2) // dax config pod (likewise)
	s.assertInline(3) // the interrupt pod (likewise)
	s.assertInline(4) // dax post-interrupt pod (likewise)
	s.assertInline(5) // node complete, uncordoned
	s.assertInline(6) // the Skyhook or NodeWright complete
	s.assertInline(7) // node-meta ConfigMap (skipped)

	// What the skipped pod documents look for: dax ran apply, config and
	// post-interrupt; the node ran one interrupt, restarting the services
	// of both packages.
	checkStages(s.t, pods, "kind-worker", "dax", "apply", "config", "post-interrupt")
	interrupts := pods.interruptsOn("kind-worker")
	if len(interrupts) != 1 {
		s.t.Fatalf("interrupt pods on kind-worker: %v, want one for the group", interrupts)
	}
	in := interrupts[0].interrupt(s.t)
	services := slices.Sorted(slices.Values(in.Services))
	if in.Type != skyhookv1.InterruptService || !slices.Equal(services, []string{"containerd", "cron", "foobar"}) {
		s.t.Errorf("%s runs %+v, want a service restart of containerd, cron and foobar", interrupts[0], in)
	}
}

// interruptGroupingResources are the resources of upstream's
// interrupt-grouping chainsaw-test.yaml assert steps, in order.
var interruptGroupingResources = []string{
	// #0 assert
	`
kind: Node
apiVersion: v1
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_interrupt-grouping: in_progress
  annotations:
    skyhook.nvidia.com/status_interrupt-grouping: in_progress
spec:
  taints:
  - effect: NoSchedule
    key: node.kubernetes.io/unschedulable
status:
  (conditions[?type == 'skyhook.nvidia.com/interrupt-grouping/NotReady']):
  - reason: "Incomplete"
    status: "True"
  (conditions[?type == 'skyhook.nvidia.com/interrupt-grouping/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #1 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: interrupt-grouping
    skyhook.nvidia.com/package: dax-1.2.3
  annotations:
    skyhook.nvidia.com/package: >-
      {"name":"dax","version":"1.2.3","skyhook":"interrupt-grouping","stage":"apply","image":"ghcr.io/nvidia/skyhook/agentless"}
  ownerReferences:
    - apiVersion: skyhook.nvidia.com/v1alpha1
      kind: Skyhook
      name: interrupt-grouping
spec:
  initContainers:
    - name: dax-init
      image: ghcr.io/nvidia/skyhook/agentless:1.2.3
    - name: dax-apply
      image: ghcr.io/nvidia/skyhook/agentless:6.2.0
      args:
        ([0]): apply
        ([1]): /root
        (length(@)): 3
    - name: dax-applycheck
      image: ghcr.io/nvidia/skyhook/agentless:6.2.0
      args:
        ([0]): apply-check
        ([1]): /root
        (length(@)): 3
  (tolerations[?key == 'nvidia.com/gpu']):
    - operator: Exists
`,
	// #2 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: interrupt-grouping
    skyhook.nvidia.com/package: dax-1.2.3
  annotations:
    skyhook.nvidia.com/package: >-
      {"name":"dax","version":"1.2.3","skyhook":"interrupt-grouping","stage":"config","image":"ghcr.io/nvidia/skyhook/agentless"}
  ownerReferences:
    - apiVersion: skyhook.nvidia.com/v1alpha1
      kind: Skyhook
      name: interrupt-grouping
spec:
  initContainers:
    - name: dax-init
    - name: dax-config
      args:
        ([0]): config
        ([1]): /root
        (length(@)): 3
    - name: dax-configcheck
      args:
        ([0]): config-check
        ([1]): /root
        (length(@)): 3
  (tolerations[?key == 'nvidia.com/gpu']):
    - operator: Exists
`,
	// #3 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: interrupt-grouping
    skyhook.nvidia.com/package: dax-1.2.3
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package")):
      {
        "name": "dax",
        "version": "1.2.3",
        "skyhook": "interrupt-grouping",
        "stage": "interrupt",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
  ownerReferences:
    - apiVersion: skyhook.nvidia.com/v1alpha1
      kind: Skyhook
      name: interrupt-grouping
spec:
  initContainers:
    - name: interrupt
      args:
        ([0]): interrupt
        ([1]): /root
        (parse_json(base64_decode([3]))):
          {
              "type": "service_restart",
              "services": [
                  "containerd",
                  "cron",
                  "foobar"
              ]
          }
        (length(@)): 4
  (tolerations[?key == 'nvidia.com/gpu']):
    - operator: Exists
`,
	// #4 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: interrupt-grouping
    skyhook.nvidia.com/package: dax-1.2.3
  annotations:
    skyhook.nvidia.com/package: >-
      {"name":"dax","version":"1.2.3","skyhook":"interrupt-grouping","stage":"post-interrupt","image":"ghcr.io/nvidia/skyhook/agentless"}
  ownerReferences:
    - apiVersion: skyhook.nvidia.com/v1alpha1
      kind: Skyhook
      name: interrupt-grouping
spec:
  initContainers:
    - name: dax-init
    - name: dax-post-interrupt
      args:
        ([0]): post-interrupt
        ([1]): /root
        (length(@)): 3
    - name: dax-post-interruptcheck
      args:
        ([0]): post-interrupt-check
        ([1]): /root
        (length(@)): 3
  (tolerations[?key == 'nvidia.com/gpu']):
    - operator: Exists
`,
	// #5 assert
	`
kind: Node
apiVersion: v1
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_interrupt-grouping: complete
  annotations:
    (length("skyhook.nvidia.com/version_interrupt-grouping") >= ` + "`" + `6` + "`" + `): true
    skyhook.nvidia.com/nodeState_interrupt-grouping: >-
      {"dax|1.2.3":{"name":"dax","version":"1.2.3","image":"ghcr.io/nvidia/skyhook/agentless","stage":"post-interrupt","state":"complete"},"zeb|2.1.4":{"name":"zeb","version":"2.1.4","image":"ghcr.io/nvidia/skyhook/agentless","stage":"post-interrupt","state":"complete"}}
    skyhook.nvidia.com/status_interrupt-grouping: complete
  (!taints || length(taints)==` + "`" + `0` + "`" + ` || (taints && !not_null(taints))): true ## taints should be empty or not exist
status:
  (conditions[?type == 'skyhook.nvidia.com/interrupt-grouping/NotReady']):
  - reason: "Complete"
    status: "False"
  (conditions[?type == 'skyhook.nvidia.com/interrupt-grouping/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #6 assert
	`
kind: Skyhook
apiVersion: skyhook.nvidia.com/v1alpha1
metadata:
  name: interrupt-grouping
  annotations:
    ## test that version info is present
    ## the quotes are to escape the . and / in the key
    (length("skyhook.nvidia.com/version") >= ` + "`" + `6` + "`" + `): true
status:
  status: complete
  (to_number(observedGeneration) == ` + "`" + `2` + "`" + ` || to_number(observedGeneration) == ` + "`" + `3` + "`" + `): true ## migrate seems to add 1, but not in all cases it seems
  nodeState:
    (values(@)):
      - dax|1.2.3:
          name: dax
          stage: post-interrupt
          state: complete
          version: 1.2.3
          image: ghcr.io/nvidia/skyhook/agentless
        zeb|2.1.4:
          name: zeb
          stage: post-interrupt
          state: complete
          version: 2.1.4
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - complete
`,
	// #7 assert
	`
kind: ConfigMap
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/skyhook-node-meta: interrupt-grouping
  ownerReferences:
  - apiVersion: skyhook.nvidia.com/v1alpha1
    blockOwnerDeletion: true
    controller: true
    kind: Skyhook
    name: interrupt-grouping
data:
  (length(@)): 3
  labels.json:
    (contains(@, 'skyhook.nvidia.com/test-node')): true
    (contains(@, 'skyhook.nvidia.com/status_interrupt-grouping')): true
  annotations.json:
    (contains(@, 'skyhook.nvidia.com/status_interrupt-grouping')): true
    (contains(@, 'skyhook.nvidia.com/nodeState_interrupt-grouping')): true
  packages.json:
    (contains(@, '"agentVersion"')): true
    (contains(@, '"dax"')): true
`,
}
