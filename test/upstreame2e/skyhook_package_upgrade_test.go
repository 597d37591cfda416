package upstreame2e

import "testing"

// skyhook/package-upgrade: nullptr 2.0.0 (a service interrupt) installs
// through apply, config, interrupt and post-interrupt; bumped to 2.0.1 with
// a changed configMap, it runs the upgrade stage (not apply), the interrupt
// again, and completes at post-interrupt.
func TestSkyhookPackageUpgrade(t *testing.T) {
	packageUpgrade(newScenario(t, "skyhook/package-upgrade"))
}

// packageUpgrade is the body of skyhook/package-upgrade and of its v0.20
// twin nodewright/package-upgrade, for the scenario's kind.
func packageUpgrade(s *scenario) {
	pods := watchRolloutStagePods(s.t, s.kind, "package-upgrade")
	// nullptr sets no SLEEP_LEN: the agentless image sleeps its default
	// (5-9 s), which the expectations on its apply and upgrade in progress
	// rely on; the simulation would run it at once.
	s.agentlessSleepsByDefault()

	s.step("initial install")
	_, _ = s.cli("reset", "package-upgrade", "--confirm") // upstream: || true
	s.create(s.rolloutFile())
	s.assert("assert-install.yaml")

	s.step("upgrade")
	s.update("update.yaml")
	s.assertInline(0) // node in_progress, nullptr 2.0.1 at upgrade
	s.assertInline(1) // the upgrade pod (NodeWright's pod shape: skipped, checked below)
	s.assertInline(2) // node complete at post-interrupt
	s.assertInline(3) // the Skyhook or NodeWright complete
	s.assert("assert-cm-update.yaml")

	// What the skipped pod document looks for: 2.0.1 ran the upgrade
	// stage, and not apply.
	var stages []string
	for _, p := range pods.all() {
		if p.Version == "2.0.1" {
			stages = append(stages, p.Stage)
		}
	}
	s.t.Logf("stage pods of nullptr 2.0.1: %v", stages)
	if len(stages) == 0 || stages[0] != "upgrade" {
		s.t.Errorf("nullptr 2.0.1 ran %v, want the upgrade stage first", stages)
	}
	for _, stage := range stages {
		if stage == "apply" {
			s.t.Errorf("nullptr 2.0.1 ran apply after a version bump: %v", stages)
		}
	}
}

// packageUpgradeResources are the resources of upstream's package-upgrade
// chainsaw-test.yaml assert steps, in order.
var packageUpgradeResources = []string{
	// #0 assert
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_package-upgrade: in_progress
  annotations:
    ("skyhook.nvidia.com/nodeState_package-upgrade" && parse_json("skyhook.nvidia.com/nodeState_package-upgrade")):
      {
        "nullptr|2.0.1": {
            "name": "nullptr",
            "version": "2.0.1",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "upgrade",
            "state": "in_progress"
        }
      }
    skyhook.nvidia.com/status_package-upgrade: in_progress
spec:
  taints:
  - effect: NoSchedule
    key: node.kubernetes.io/unschedulable
status:
  (conditions[?type == 'skyhook.nvidia.com/package-upgrade/NotReady']):
  - reason: "Incomplete"
    status: "True"
  (conditions[?type == 'skyhook.nvidia.com/package-upgrade/Erroring']):
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
    skyhook.nvidia.com/name: package-upgrade
    skyhook.nvidia.com/package: nullptr-2.0.1
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package")):
      {
        "name": "nullptr",
        "version": "2.0.1",
        "skyhook": "package-upgrade",
        "stage": "upgrade",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
  ownerReferences:
    - apiVersion: skyhook.nvidia.com/v1alpha1
      kind: Skyhook
      name: package-upgrade
spec:
  initContainers:
    - name: nullptr-init
    - name: nullptr-upgrade
      args:
        ([0]): upgrade
        ([1]): /root
        (length(@)): 3
    - name: nullptr-upgradecheck
      args:
        ([0]): upgrade-check
        ([1]): /root
        (length(@)): 3
`,
	// #2 assert
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_package-upgrade: complete
  annotations:
    ("skyhook.nvidia.com/nodeState_package-upgrade" && parse_json("skyhook.nvidia.com/nodeState_package-upgrade")):
      {
        "nullptr|2.0.1": {
            "name": "nullptr",
            "version": "2.0.1",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "post-interrupt",
            "state": "complete"
        }
      }
    skyhook.nvidia.com/status_package-upgrade: complete
status:
  (conditions[?type == 'skyhook.nvidia.com/package-upgrade/NotReady']):
  - reason: "Complete"
    status: "False"
  (conditions[?type == 'skyhook.nvidia.com/package-upgrade/Erroring']):
  - reason: "Not Erroring"
    status: "False"
`,
	// #3 assert
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: package-upgrade
status:
  status: complete
  observedGeneration: 4
  completeNodes: 1/1
  packageList: nullptr:2.0.1
  nodesInProgress: 0
  nodeState:
    (values(@)):
      - nullptr|2.0.1:
          name: nullptr
          state: complete
          version: '2.0.1'
          stage: post-interrupt
          image: ghcr.io/nvidia/skyhook/agentless
  nodeStatus:
    (values(@)):
      - complete
`,
}
