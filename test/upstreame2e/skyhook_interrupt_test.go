package upstreame2e

import (
	"testing"
	"time"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// skyhook/interrupt: six packages, two of them interrupting (dexter
// reboots, john and baxter restart rsyslog), on a node running a pod
// labelled as not to be interrupted and a pod to drain. The node is
// cordoned; the drain waits for the protected pod, which the scenario
// deletes, then drains the other; the packages complete, the interrupt
// runs, the node is uncordoned.
func TestSkyhookInterrupt(t *testing.T) {
	s := newScenario(t, "skyhook/interrupt")
	pods := watchStagePodsOf(t, "interrupt")

	s.step("interrupt")
	_, _ = s.cli("reset", "interrupt", "--confirm") // upstream: || true
	s.create("pod.yaml")
	s.waitPodReady("important-stuff", 30*time.Second)
	s.waitPodReady("drain-on", 30*time.Second)
	s.create("skyhook.yaml")
	s.assertInline(0) // jason's apply pod (NodeWright's pod shape: skipped, checked below)
	s.assertInline(1) // node in_progress, jason configured, cordoned
	s.assert("assert-important-stuff.yaml")
	s.assert("assert-drain-me.yaml")
	s.delete("assert-important-stuff.yaml")
	s.errorFile("assert-drain-me.yaml")
	s.assertInline(2) // node in_progress, dexter and john applying, cordon_ mark
	s.assertInline(3) // dexter's interrupt pod (skipped, checked below)
	s.assertInline(4) // node complete, uncordoned
	s.assertInline(5) // Skyhook complete
	s.assert("assert-cm-b.yaml")

	// What the skipped pod documents look for: jason's apply ran with its
	// agentImageOverride; the node's interrupt was dexter's reboot.
	if p, ok := pods.find(func(p stagePod) bool { return p.Package == "jason" && p.Stage == "apply" }); !ok {
		t.Error("no apply pod for jason")
	} else {
		agents := 0
		for _, c := range p.Pod.Spec.InitContainers {
			if c.Name != "jason-apply" && c.Name != "jason-applycheck" {
				continue
			}
			agents++
			if c.Image != "ghcr.io/nvidia/skyhook/agentless:3.2.3" {
				t.Errorf("jason's %s container runs %s, want its agentImageOverride ghcr.io/nvidia/skyhook/agentless:3.2.3", c.Name, c.Image)
			}
		}
		if agents != 2 {
			t.Errorf("jason's apply pod has init containers %v, want jason-apply and jason-applycheck among them", p.Pod.Spec.InitContainers)
		}
	}
	interrupts := pods.interruptsOn("kind-worker")
	var reboots int
	for _, p := range interrupts {
		if p.interrupt(t).Type == skyhookv1.InterruptReboot {
			reboots++
		}
	}
	if reboots != 1 {
		t.Errorf("interrupt pods on kind-worker: %v, %d of them reboots; want the one reboot dexter asks for", interrupts, reboots)
	}
}

// interruptResources are the resources of upstream's interrupt
// chainsaw-test.yaml assert steps, in order.
var interruptResources = []string{
	// #0 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: interrupt
    skyhook.nvidia.com/package: jason-1.3.2
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package")):
      {
        "name": "jason",
        "version": "1.3.2",
        "skyhook": "interrupt",
        "stage": "apply",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
  ownerReferences:
    - apiVersion: skyhook.nvidia.com/v1alpha1
      kind: Skyhook
      name: interrupt
spec:
  initContainers:
    - name: jason-init
      image: ghcr.io/nvidia/skyhook/agentless:1.3.2
    - name: jason-apply
      image: ghcr.io/nvidia/skyhook/agentless:3.2.3
      args:
        ([0]): apply
        ([1]): /root
        (length(@)): 3
    - name: jason-applycheck
      image: ghcr.io/nvidia/skyhook/agentless:3.2.3
      args:
        ([0]): apply-check
        ([1]): /root
        (length(@)): 3
`,
	// #1 assert
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_interrupt: in_progress
  annotations:
    ("skyhook.nvidia.com/nodeState_interrupt" && parse_json("skyhook.nvidia.com/nodeState_interrupt")):
      {
        "jason|1.3.2": {
            "name": "jason",
            "version": "1.3.2",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        }
      }
    skyhook.nvidia.com/status_interrupt: in_progress
spec:
  taints:
  - effect: NoSchedule
    key: node.kubernetes.io/unschedulable
status:
  (conditions[?type == 'skyhook.nvidia.com/interrupt/NotReady']):
  - reason: "Incomplete"
    status: "True"
  (conditions[?type == 'skyhook.nvidia.com/interrupt/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #2 assert
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_interrupt: in_progress
  annotations:
    ("skyhook.nvidia.com/nodeState_interrupt" && parse_json("skyhook.nvidia.com/nodeState_interrupt")):
      {
        "jason|1.3.2": {
            "name": "jason",
            "version": "1.3.2",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        },
        "dexter|1.2.3": {
            "name": "dexter",
            "version": "1.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "apply",
            "state": "in_progress"
        },
        "john|1.2.3": {
            "name": "john",
            "version": "1.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "apply",
            "state": "in_progress"
        }
      }
    skyhook.nvidia.com/cordon_interrupt: "true"
    skyhook.nvidia.com/status_interrupt: in_progress
spec:
  taints:
  - effect: NoSchedule
    key: node.kubernetes.io/unschedulable
status:
  (conditions[?type == 'skyhook.nvidia.com/interrupt/NotReady']):
  - reason: "Incomplete"
    status: "True"
  (conditions[?type == 'skyhook.nvidia.com/interrupt/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #3 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: interrupt
    skyhook.nvidia.com/package: dexter-1.2.3
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package")):
      {
          "name": "dexter",
          "version": "1.2.3",
          "skyhook": "interrupt",
          "stage": "interrupt",
          "image": "ghcr.io/nvidia/skyhook/agentless"
      }
  ownerReferences:
    - apiVersion: skyhook.nvidia.com/v1alpha1
      kind: Skyhook
      name: interrupt
spec:
  initContainers:
    - name: interrupt
      args:
        ([0]): interrupt
        ([1]): /root
        (parse_json(base64_decode([3]))):
          {
            "type": "node_restart",
          }
        (length(@)): 4
`,
	// #4 assert
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_interrupt: complete
  annotations:
    ("skyhook.nvidia.com/nodeState_interrupt" && parse_json("skyhook.nvidia.com/nodeState_interrupt")):
      {
        "baxter|3.3": {
            "name": "baxter",
            "version": "3.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        },
        "dexter|1.2.3": {
            "name": "dexter",
            "version": "1.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        },
        "foobar|1.2": {
            "name": "foobar",
            "version": "1.2",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        },
        "jason|1.3.2": {
            "name": "jason",
            "version": "1.3.2",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        },
        "spencer|3.2.3": {
            "name": "spencer",
            "version": "3.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        }
      }
    skyhook.nvidia.com/status_interrupt: complete
  (!taints || length(taints)==` + "`" + `0` + "`" + ` || (taints && !not_null(taints))): true ## taints should be empty or not exist
status:
  (conditions[?type == 'skyhook.nvidia.com/interrupt/NotReady']):
  - reason: "Complete"
    status: "False"
  (conditions[?type == 'skyhook.nvidia.com/interrupt/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #5 assert
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: interrupt
status:
  status: complete
  observedGeneration: 2
  nodeState:
    (values(@)):
      - baxter|3.3:
          name: baxter
          stage: post-interrupt
          state: complete
          version: "3.3"
          image: ghcr.io/nvidia/skyhook/agentless
        dexter|1.2.3:
          name: dexter
          stage: post-interrupt
          state: complete
          version: 1.2.3
          image: ghcr.io/nvidia/skyhook/agentless
        foobar|1.2:
          name: foobar
          stage: config
          state: complete
          version: "1.2"
          image: ghcr.io/nvidia/skyhook/agentless
        spencer|3.2.3:
          name: spencer
          stage: config
          state: complete
          version: 3.2.3
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - complete
`,
}
