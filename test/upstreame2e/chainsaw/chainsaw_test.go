package chainsaw

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/test/testenv"
)

func upstreamFile(t *testing.T, name string) []Document {
	t.Helper()
	ref, err := testenv.ReferenceDir()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := ReadFile(filepath.Join(ref, "nodewright", "k8s-tests", "chainsaw", filepath.FromSlash(name)), name)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func object(t *testing.T, text string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// A node as NodeWright leaves it with failure-skyhook erroring: dexter
// complete, failure erroring with restarts. restarts is the %s.
const erroringNode = `
apiVersion: v1
kind: Node
metadata:
  name: kind-worker
  labels:
    kubernetes.io/hostname: kind-worker
    skyhook.nvidia.com/test-node: skyhooke2e
    skyhook.nvidia.com/status_failure-skyhook: erroring
  annotations:
    skyhook.nvidia.com/status_failure-skyhook: erroring
    skyhook.nvidia.com/nodeState_failure-skyhook: '{"dexter|1.2.3":{"name":"dexter","version":"1.2.3","image":"ghcr.io/nvidia/skyhook/agentless","stage":"config","state":"complete"},"failure|1.2.3":{"name":"failure","version":"1.2.3","image":"ghcr.io/nvidia/skyhook/agentless","stage":"apply","state":"erroring"%s}}'
status:
  conditions:
  - type: Ready
    status: "True"
    reason: KubeletReady
  - type: skyhook.nvidia.com/failure-skyhook/NotReady
    status: "True"
    reason: Incomplete
  - type: skyhook.nvidia.com/failure-skyhook/Erroring
    status: "True"
    reason: Package(s) Erroring or Unknown
`

// Upstream's own expectation (failure-skyhook/node-assert.yaml, its Node
// document: json_parse of an annotation, `(restarts > 0)`, conditions
// filtered by type) holds on the node it describes and fails when one
// field differs.
func TestUpstreamNodeAssertPassesAndFails(t *testing.T) {
	ctx := context.Background()
	doc := upstreamFile(t, "skyhook/failure-skyhook/node-assert.yaml")[0]
	if doc.Describe() != "Node[skyhook.nvidia.com/test-node=skyhooke2e]" {
		t.Fatalf("document %s, want the Node of failure-skyhook", doc.Describe())
	}

	pass := object(t, strings.Replace(erroringNode, "%s", `,"restarts":2`, 1))
	if errs, err := Check(ctx, doc.Expected, pass); err != nil || len(errs) > 0 {
		t.Fatalf("the node NodeWright's assert describes: errors %v, %v; want a match", errs, err)
	}

	noRestarts := object(t, strings.Replace(erroringNode, "%s", "", 1))
	errs, err := Check(ctx, doc.Expected, noRestarts)
	if err == nil && len(errs) == 0 {
		t.Fatal("a node whose erroring package has no restarts matched; want the (restarts > `0`) mismatch")
	}

	complete := object(t, strings.Replace(strings.Replace(erroringNode, "%s", `,"restarts":2`, 1),
		"reason: Package(s) Erroring or Unknown", "reason: Not Erroring", 1))
	errs, err = Check(ctx, doc.Expected, complete)
	if err != nil || len(errs) != 1 || !strings.Contains(errs[0].Error(), "Erroring") {
		t.Fatalf("a node whose Erroring condition has another reason: errors %v, %v; want one naming that condition", errs, err)
	}
}

// Partial match: fields not in the expectation are ignored; a missing
// field, a different scalar or a list of another length fails.
func TestCheckIsAPartialMatch(t *testing.T) {
	ctx := context.Background()
	actual := object(t, `
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: s, generation: 1}
status:
  status: complete
  observedGeneration: 1
  nodeStatus: {kind-worker: complete}
`)
	for expected, want := range map[string]bool{
		`{status: {status: complete}}`:                                             true,
		`{status: {observedGeneration: 1, nodeStatus: {(values(@)): [complete]}}}`: true,
		`{status: {(to_number(observedGeneration) == ` + "`1`" + `): true}}`:       true,
		`{status: {status: erroring}}`:                                             false,
		`{status: {observedGeneration: 2}}`:                                        false,
		`{status: {nodeStatus: {(values(@)): [complete, complete]}}}`:              false,
		`{status: {packageList: a}}`:                                               false,
		`{metadata: {annotations: {skyhook.nvidia.com/pause: "true"}}}`:            false,
	} {
		errs, err := Check(ctx, object(t, expected), actual)
		if got := err == nil && len(errs) == 0; got != want {
			t.Errorf("%s: match %v (errors %v, %v), want %v", expected, got, errs, err, want)
		}
	}
}

func TestParseSkipsEmptyDocuments(t *testing.T) {
	docs := upstreamFile(t, "skyhook/simple-skyhook/assert_pods.yaml")
	if len(docs) != 2 || docs[1].Index != 1 || docs[1].Describe() != "Pod[skyhook.nvidia.com/name=simple-skyhook,skyhook.nvidia.com/package=foobar-1.2]" {
		t.Fatalf("%d documents (%v), want the two Pods", len(docs), docs)
	}
}

func TestMetricMatchesAsMetricsTestPy(t *testing.T) {
	m, err := ParseMetric("skyhook_package_state_count", "1", "-t", "package_name=dexter", "-t", "skyhook_name=simple-skyhook", "-t", "state=complete")
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]bool{
		`skyhook_package_state_count{package_name="dexter",package_version="1.2.3",skyhook_name="simple-skyhook",state="complete"} 1`: true,
		`skyhook_package_state_count{package_name="dexter",package_version="1.2.3",skyhook_name="simple-skyhook",state="complete"} 2`: false,
		`skyhook_package_state_count{package_name="dexter",skyhook_name="simple-skyhook",state="erroring"} 1`:                         false,
		`skyhook_package_state_count{package_name="dexter",skyhook_name="simple-skyhook"} 1`:                                          false,
		`skyhook_package_state_count 1`:                                         false,
		`# HELP skyhook_package_state_count Nodes by the state of the package.`: false,
	} {
		if got := m.Matches(line); got != want {
			t.Errorf("%s: %v, want %v", line, got, want)
		}
	}
	absent, err := ParseMetric("skyhook_node_target_count", "1", "-t", "skyhook_name=delete-skyhook", "--not-found")
	if err != nil || !absent.NotFound || absent.Found(strings.NewReader(`skyhook_node_target_count{skyhook_name="other"} 1`)) {
		t.Fatalf("--not-found check %+v (%v): want absent from another Skyhook's samples", absent, err)
	}
}
