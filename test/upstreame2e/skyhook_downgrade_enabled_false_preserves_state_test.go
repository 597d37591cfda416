package upstreame2e

import "testing"

// skyhook/downgrade-enabled-false-preserves-state: a package without
// uninstall support is downgraded without an uninstall, and the record of
// the version it replaces stays beside the new one (its files are still on
// the node).
func TestSkyhookDowngradeEnabledFalsePreservesState(t *testing.T) {
	downgradeEnabledFalsePreservesState(newScenario(t, "skyhook/downgrade-enabled-false-preserves-state"))
}

// downgradeEnabledFalsePreservesState is the body of
// skyhook/downgrade-enabled-false-preserves-state and of its v0.20 twin
// nodewright/downgrade-enabled-false-preserves-state, for the scenario's
// kind.
func downgradeEnabledFalsePreservesState(s *scenario) {
	const name = "preserve-downgrade-state"

	s.step("install-v2")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create(s.rolloutFile())
	s.assertInline(0)

	s.step("downgrade")
	s.update("update-downgrade.yaml")
	s.assertInline(1)
	s.assertInline(2)
}

// downgradeEnabledFalsePreservesStateResources are the resources of upstream's
// downgrade-enabled-false-preserves-state chainsaw-test.yaml assert steps, in order.
var downgradeEnabledFalsePreservesStateResources = []string{
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: preserve-downgrade-state
status:
  status: complete
`,
	`
apiVersion: v1
kind: Node
metadata:
  labels:
    skyhook.nvidia.com/test-node: skyhooke2e
  annotations:
    ("skyhook.nvidia.com/nodeState_preserve-downgrade-state" && parse_json("skyhook.nvidia.com/nodeState_preserve-downgrade-state")):
      {
        "mypkg|2.1.4": {
            "name": "mypkg",
            "version": "2.1.4",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        },
        "mypkg|1.2.3": {
            "name": "mypkg",
            "version": "1.2.3",
            "image": "ghcr.io/nvidia/skyhook/agentless",
            "stage": "config",
            "state": "complete"
        }
      }
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: preserve-downgrade-state
status:
  status: complete
`,
}
