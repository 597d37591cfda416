package upstreame2e

import (
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// skyhook/config-skyhook: three packages, configInterrupts on
// game.properties; a configMap update while they run, another once they
// are complete (config and the merged config interrupts rerun), one on
// ui.properties, which no configInterrupt names (config only), and one
// matched by a glob.
func TestSkyhookConfigSkyhook(t *testing.T) {
	configRollout(newScenario(t, "skyhook/config-skyhook"))
}

// configRollout is the body of skyhook/config-skyhook and of its v0.20 twin
// nodewright/config-nodewright, for the scenario's kind; the twin's glob
// update is not run (reasonConfigGlobMissing).
func configRollout(s *scenario) {
	pods := watchRolloutStagePods(s.t, s.kind, "config-skyhook")

	s.step("deploy")
	_, _ = s.cli("reset", "config-skyhook", "--confirm") // upstream: || true
	// The first expectation wants the three packages applying at once.
	// Here the apply of a package that interrupts waits three passes
	// (record, cordon, drain; about 0.3 s) where NodeWright's cordons,
	// drains and applies in one reconcile: at a tenth of SLEEP_LEN,
	// baxter (no interrupt, 0.2 s) is through apply before dexter and
	// spencer start. At the image's own speed, as on upstream's kind
	// cluster, the three overlap.
	restore := s.agentlessAtOwnSpeed()
	s.create(s.rolloutFile())
	s.assertInline(0) // node in_progress, every package applying, cordoned
	s.assertInline(1) // the Skyhook or NodeWright in_progress
	restore()
	s.assert("assert-cm-deploy.yaml")

	s.step("update while running")
	s.apply("update-while-running.yaml")
	s.assertInline(2) // node complete, every package at post-interrupt
	s.assertInline(3) // the Skyhook or NodeWright complete (each at its kind's generation)
	s.assert("assert-cm-update-while-running.yaml")

	s.step("update")
	s.apply("update.yaml")
	s.assertInline(4)
	s.assertInline(5)
	s.assert("assert-cm-update.yaml")

	s.step("no-interrupt update")
	s.apply("update-no-interrupt.yaml")
	s.assertInline(6) // baxter and dexter at config: no interrupt
	s.assertInline(7)
	s.assert("assert-cm-update-no-interrupt.yaml")

	s.step("glob update")
	if s.kind == skyhookv1.NodeWrights {
		// Upstream's v0.20 config-nodewright has no stored
		// update-glob.yaml.
		s.t.Logf("skipped: %s", reasonConfigGlobMissing)
		return
	}
	configRuns := func() int {
		n := 0
		for _, p := range pods.all() {
			if p.Package == "dexter" && p.Stage == "config" {
				n++
			}
		}
		return n
	}
	before := configRuns()
	s.apply("update-glob.yaml")
	s.assert("assert-update-glob.yaml")

	// What the skipped pod document looks for: dexter's config ran again.
	if configRuns() == before {
		s.t.Error("no dexter config pod after the glob update")
	}
}

// configSkyhookResources are the resources of upstream's config-skyhook
// chainsaw-test.yaml assert steps, in order.
var configSkyhookResources = []string{
	// #0 assert
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_config-skyhook: in_progress
  annotations:
    ("skyhook.nvidia.com/nodeState_config-skyhook" && parse_json("skyhook.nvidia.com/nodeState_config-skyhook")):
      {
        "baxter|3.2.1": {
            "name": "baxter",
            "version": "3.2.1",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "apply",
            "state": "in_progress"
        },
        "spencer|3.2.3": {
            "name": "spencer",
            "version": "3.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "apply",
            "state": "in_progress"
        },
        "dexter|1.2.3": {
            "name": "dexter",
            "version": "1.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "apply",
            "state": "in_progress"
        },
      }
    skyhook.nvidia.com/status_config-skyhook: in_progress
spec:
  taints:
  - effect: NoSchedule
    key: node.kubernetes.io/unschedulable
status:
  (conditions[?type == 'skyhook.nvidia.com/config-skyhook/NotReady']):
  - reason: "Incomplete"
    status: "True"
  (conditions[?type == 'skyhook.nvidia.com/config-skyhook/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #1 assert
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: config-skyhook
status:
  status: in_progress
  nodeState:
    (values(@)):
      - baxter|3.2.1:
          name: baxter
          state: in_progress
          version: '3.2.1'
          stage: apply
          image: ghcr.io/nvidia/skyhook/agentless
        spencer|3.2.3:
          name: spencer
          state: in_progress
          version: '3.2.3'
          stage: apply
          image: ghcr.io/nvidia/skyhook/agentless
        dexter|1.2.3:
          name: dexter
          state: in_progress
          version: '1.2.3'
          stage: apply
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - in_progress
`,
	// #2 assert
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_config-skyhook: complete
  annotations:
    ("skyhook.nvidia.com/nodeState_config-skyhook" && parse_json("skyhook.nvidia.com/nodeState_config-skyhook")):
      {
        "baxter|3.2.1": {
            "name": "baxter",
            "version": "3.2.1",
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
        "spencer|3.2.3": {
            "name": "spencer",
            "version": "3.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        }
      }
    skyhook.nvidia.com/status_config-skyhook: complete
status:
  (conditions[?type == 'skyhook.nvidia.com/config-skyhook/NotReady']):
  - reason: "Complete"
    status: "False"
  (conditions[?type == 'skyhook.nvidia.com/config-skyhook/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #3 assert
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: config-skyhook
status:
  status: complete
  observedGeneration: 3
  nodeState:
    (values(@)):
      - dexter|1.2.3:
          name: dexter
          state: complete
          version: '1.2.3'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
        baxter|3.2.1:
          name: baxter
          state: complete
          version: '3.2.1'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
        spencer|3.2.3:
          name: spencer
          state: complete
          version: '3.2.3'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - complete
`,
	// #4 assert
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_config-skyhook: complete
  annotations:
    ("skyhook.nvidia.com/nodeState_config-skyhook" && parse_json("skyhook.nvidia.com/nodeState_config-skyhook")):
      {
        "baxter|3.2.1": {
            "name": "baxter",
            "version": "3.2.1",
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
        "spencer|3.2.3": {
            "name": "spencer",
            "version": "3.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        }
      }
    skyhook.nvidia.com/status_config-skyhook: complete
status:
  (conditions[?type == 'skyhook.nvidia.com/config-skyhook/NotReady']):
  - reason: "Complete"
    status: "False"
  (conditions[?type == 'skyhook.nvidia.com/config-skyhook/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #5 assert
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: config-skyhook
status:
  status: complete
  observedGeneration: 4
  nodeState:
    (values(@)):
      - dexter|1.2.3:
          name: dexter
          state: complete
          version: '1.2.3'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
        baxter|3.2.1:
          name: baxter
          state: complete
          version: '3.2.1'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
        spencer|3.2.3:
          name: spencer
          state: complete
          version: '3.2.3'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - complete
`,
	// #6 assert
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_config-skyhook: complete
  annotations:
    ("skyhook.nvidia.com/nodeState_config-skyhook" && parse_json("skyhook.nvidia.com/nodeState_config-skyhook")):
      {
        "baxter|3.2.1": {
            "name": "baxter",
            "version": "3.2.1",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        },
        "dexter|1.2.3": {
            "name": "dexter",
            "version": "1.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        },
        "spencer|3.2.3": {
            "name": "spencer",
            "version": "3.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        }
      }
    skyhook.nvidia.com/status_config-skyhook: complete
status:
  (conditions[?type == 'skyhook.nvidia.com/config-skyhook/NotReady']):
  - reason: "Complete"
    status: "False"
  (conditions[?type == 'skyhook.nvidia.com/config-skyhook/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #7 assert
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: config-skyhook
status:
  status: complete
  observedGeneration: 5
  nodeState:
    (values(@)):
      - dexter|1.2.3:
          name: dexter
          state: complete
          version: '1.2.3'
          stage: config
          image: ghcr.io/nvidia/skyhook/agentless
        baxter|3.2.1:
          name: baxter
          state: complete
          version: '3.2.1'
          stage: config
          image: ghcr.io/nvidia/skyhook/agentless
        spencer|3.2.3:
          name: spencer
          state: complete
          version: '3.2.3'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - complete
`,
}
