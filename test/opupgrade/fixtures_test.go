package opupgrade

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// recordFormat is a format of node records an earlier version of this
// operator wrote, and the version that wrote it.
//
// The formats, from `git log -p -- api/v1alpha1/node_contract.go
// reconcile/nodestate api/nodestate reconcile/interrupt` (the record
// format moved to api/nodestate unchanged; a version is a commit a
// working session ended at: the history has no tags):
//
//  1. b8abc2d..da01da1 (2026-11-21 to 11-24; versions 9fe1d4f, 64e972f):
//     every nodeState entry has "state" and "restarts", "restarts":0
//     included; no version_ annotation; a cordon is signed with
//     cordoned-by only (no cordon_ mark); config_ holds per package the
//     configMap's hash key by key ("key=hash,...", since 9dde24c),
//     batch_ the DeploymentPolicy batch, interrupt_ the interrupt in
//     progress (phases drain, interrupt, verify, skipped).
//  2. da01da1..0273fae (2026-11-24; version 4bdb476): "restarts" left
//     out at 0 (and "state" when empty), as NodeWright writes them;
//     still no version_ and no cordon_ mark.
//  3. 0273fae.. (2026-11-24 on; versions caac72f, 763e38e and the
//     current tree): version_<skyhook> and cordon_<skyhook> written, the
//     interrupt phase "drained" (cordoned and drained before the apply).
//     The current format: TestUpgradeMidRollout covers it with records
//     the previous version's binary writes as it runs.
//
// Between 4d16954 and 9dde24c (70 minutes of 2026-11-21, no version ended
// there) config_ held one hash of the whole configMap per package; the
// current operator reads such a hash as changed (stagepod.ChangedKeys: an
// unreadable hash counts every key) and reruns the config stage. No
// fixture holds it: no running operator can have written it.
type recordFormat struct {
	// name is the fixture's file, testdata/<name>.yaml, and the name of its
	// Skyhook, policy and nodes.
	name string
	// commit wrote it: the last version that did.
	commit string
	// what differs from the current format.
	what string
}

var olderFormats = []recordFormat{
	{name: "restarts-written", commit: "9fe1d4ff92c064be5ac8f4649b0ef0d0b31378a2",
		what: `"restarts":0 in every nodeState entry, no version_ annotation, no cordon_ mark`},
	{name: "unversioned", commit: "4bdb4760a1fa41b8057172b68836fd8e6ae66a5e",
		what: "nodeState as NodeWright writes it, no version_ annotation, no cordon_ mark"},
}

// fixtureNodes is how many nodes a fixture has; the last (holdNode) was
// mid-interrupt when the fixture was taken: its reboot issued, the node
// not back yet.
const fixtureNodes = 4

func fixtureNodeName(f recordFormat, i int) string { return fmt.Sprintf("%s-%d", f.name, i) }
func holdNode(f recordFormat) string               { return fixtureNodeName(f, fixtureNodes-1) }

// fixtureLabel selects a fixture's nodes (value: the fixture's name).
const fixtureLabel = "opupgrade-fixture"

// fixturePolicy and fixtureSkyhook are what a fixture's rollout ran: a
// DeploymentPolicy (so the nodes carry batch_), a package that reboots
// (interrupt_, the cordon) and one with a configMap (config_).
func fixturePolicy(f recordFormat) string {
	return fmt.Sprintf(`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: DeploymentPolicy
metadata: {name: %s}
spec:
  default: {budget: {count: 2}}
`, f.name)
}

func fixtureSkyhook(f recordFormat) string {
	return fmt.Sprintf(`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: %[1]s}
spec:
  nodeSelectors: {matchLabels: {%[2]s: %[1]s}}
  deploymentPolicy: %[1]s
  packages:
    kernel:
      version: "1.0.0"
      image: ghcr.io/x/kernel
      interrupt: {type: reboot}
      env: [{name: %[3]s, value: 150ms}]
    tuning:
      version: "2.1.0"
      image: ghcr.io/x/tuning
      configMap: {sysctl.conf: "vm.swappiness=10"}
      env: [{name: %[3]s, value: 150ms}]
`, f.name, fixtureLabel, simnode.DurationEnv)
}

// fixture is a fixture file: the policy, the Skyhook (metadata, spec and
// status as stored) and the nodes' metadata as the old operator left them.
type fixture struct {
	policy  *unstructured.Unstructured
	skyhook *unstructured.Unstructured
	nodes   []*unstructured.Unstructured
}

func fixturePath(f recordFormat) string { return filepath.Join("testdata", f.name+".yaml") }

func readFixture(f recordFormat) (*fixture, error) {
	data, err := os.ReadFile(fixturePath(f))
	if err != nil {
		return nil, err
	}
	fx := &fixture{}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		// Through the unstructured decoder, so that numbers are int64
		// (the Skyhook's generation).
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fixturePath(f), err)
		}
		if string(js) == "null" { // the header's comments
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("%s: %w", fixturePath(f), err)
		}
		switch obj.GetKind() {
		case "DeploymentPolicy":
			fx.policy = obj
		case skyhookv1.SkyhookKind:
			fx.skyhook = obj
		case "Node":
			fx.nodes = append(fx.nodes, obj)
		}
	}
	if fx.policy == nil || fx.skyhook == nil || len(fx.nodes) != fixtureNodes {
		return nil, fmt.Errorf("%s: want a DeploymentPolicy, a Skyhook and %d nodes", fixturePath(f), fixtureNodes)
	}
	return fx, nil
}

func writeFixture(f recordFormat, header string, fx *fixture) error {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(header), "\n") {
		b.WriteString("# " + line + "\n")
	}
	for _, obj := range append([]*unstructured.Unstructured{fx.policy, fx.skyhook}, fx.nodes...) {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return os.WriteFile(fixturePath(f), []byte(b.String()), 0o644)
}
