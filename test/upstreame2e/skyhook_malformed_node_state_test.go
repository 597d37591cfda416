package upstreame2e

import (
	"strings"
	"testing"
)

// skyhook/malformed-node-state: a node whose nodeState annotation is not
// JSON sets NodeStateMalformed (ParseError, naming how many nodes); once
// the annotation is repaired the condition goes.
func TestSkyhookMalformedNodeState(t *testing.T) {
	s := newScenario(t, "skyhook/malformed-node-state")
	const name = "malformed-node-state"
	const annotation = "skyhook.nvidia.com/nodeState_" + name

	s.step("install")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	s.create("skyhook.yaml")
	s.assertInline(0)

	s.step("corrupt-node-state")
	out, err := s.kubectl("get", "nodes", "-l", testNodeLabel+"="+testNodeValue, "-o", "jsonpath={.items[0].metadata.name}")
	if err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	node := strings.TrimSpace(out)
	backup, err := s.kubectl("get", "node", node, "-o", `jsonpath={.metadata.annotations.skyhook\.nvidia\.com/nodeState_malformed-node-state}`)
	if err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	if _, err := s.kubectl("annotate", "node", node, annotation+"={not-valid-json", "--overwrite"); err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	s.assertInline(1)

	s.step("repair-and-verify-cleanup")
	if _, err := s.kubectl("annotate", "node", node, annotation+"="+strings.TrimRight(backup, "\n"), "--overwrite"); err != nil {
		t.Fatalf("upstream's script step failed: %v", err)
	}
	s.assertInline(2)
}

// malformedNodeStateResources are the resources of upstream's
// malformed-node-state chainsaw-test.yaml assert steps, in order.
var malformedNodeStateResources = []string{
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: malformed-node-state
status:
  status: complete
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: malformed-node-state
status:
  (conditions[?type == 'NodeStateMalformed']):
  - status: "True"
    reason: "ParseError"
    (contains(message, 'nodeState annotation cannot be parsed on 1 node(s)')): true
`,
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: malformed-node-state
status:
  status: complete
  (length(conditions[?type == 'NodeStateMalformed']) == ` + "`" + `0` + "`" + `): true
`,
}
