package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// entryOf reads one entry of the NodeWright's record on the node.
func entryOf(t *testing.T, node, name, key string) (skyhookv1.PackageStatus, bool) {
	t.Helper()
	raw, ok := getNode(t, node).Annotations[nwKey(name).NodeStateAnnotation()]
	if !ok {
		return skyhookv1.PackageStatus{}, false
	}
	var state skyhookv1.NodeState
	if err := json.Unmarshal([]byte(raw), &state); err != nil {
		t.Fatalf("%s: record %s: %v", node, raw, err)
	}
	e, ok := state[key]
	return e, ok
}

// update-state sets one package's stage and state in the records, on the
// nodes --node and -l select, creates it with --add, and refuses what is
// not in the spec, stages and states that do not exist, and --add without
// a node filter.
func TestUpdateState(t *testing.T) {
	createNodeWright(t, "upd", nil, map[string]string{"tuning": "1.0.0", "driver": "2.0.0"})
	erroring, _ := json.Marshal(skyhookv1.NodeState{"tuning|1.0.0": {Name: "tuning", Version: "1.0.0", Image: "ghcr.io/x/tuning",
		Stage: skyhookv1.StageApply, State: skyhookv1.StateErroring, Restarts: 2}})
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "upd-a", Labels: map[string]string{"pool": "gpu"},
		Annotations: map[string]string{nwKey("upd").NodeStateAnnotation(): string(erroring)}}})
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "upd-b", Labels: map[string]string{"pool": "cpu"},
		Annotations: map[string]string{nwKey("upd").NodeStateAnnotation(): record("tuning", "1.0.0", skyhookv1.StageConfig, skyhookv1.StateComplete)}}})
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "upd-c", Labels: map[string]string{"pool": "gpu"}}})

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"upd", "tuning", "1.0.0", "install", "complete"}, `invalid stage "install": must be one of apply, config, upgrade, interrupt, post-interrupt, uninstall, uninstall-interrupt`},
		{[]string{"upd", "tuning", "1.0.0", "config", "done"}, `invalid state "done": must be one of complete, in_progress, skipped, erroring, unknown`},
		{[]string{"upd", "tuning", "1.0.0", "config", "complete", "--add"}, "--add needs --node or --selector"},
		{[]string{"upd", "tuning", "1.0.0", "config", "complete", "-l", "pool in ("}, `--selector "pool in ("`},
		{[]string{"upd", "tuning", "9.9.9", "config", "complete"}, `package "tuning" version "9.9.9" not found in spec of NodeWright "upd" (it declares driver:2.0.0, tuning:1.0.0)`},
		{[]string{"upd", "other", "1.0.0", "config", "complete"}, `package "other" version "1.0.0" not found in spec`},
		{[]string{"missing", "tuning", "1.0.0", "config", "complete"}, `no NodeWright or Skyhook named "missing": not found`},
	} {
		if _, err := run(t, withCluster(append([]string{"update-state", "-y"}, bad.args...)...)...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("update-state %v: %v, want %q", bad.args, err, bad.want)
		}
	}

	out := mustRun(t, "--dry-run", "update-state", "upd", "tuning", "1.0.0", "config", "complete", "-l", "pool=gpu")
	if e, _ := entryOf(t, "upd-a", "upd", "tuning|1.0.0"); e.State != skyhookv1.StateErroring ||
		!strings.Contains(out, `Warning: NodeWright "upd" is not paused`) ||
		!strings.Contains(out, `Warning: node "upd-c" has no record of NodeWright "upd", skipped (--add creates one)`) ||
		!strings.Contains(out, "NodeWright: upd\nPackage: tuning (version 1.0.0)\nSet to: stage config, state complete\nNodes to update (1):\n  - upd-a (now stage apply, state erroring)\n") ||
		!strings.HasSuffix(out, "[dry-run] No changes applied\n") {
		t.Fatalf("update-state --dry-run: %+v\n%s", e, out)
	}
	if out := mustRun(t, "update-state", "upd", "tuning", "1.0.0", "config", "complete", "--node", "upd-a"); !strings.HasSuffix(out, "Aborted.\n") {
		t.Fatalf("update-state without an answer:\n%s", out)
	}
	mustRun(t, "pause", "upd", "-y")
	out = mustRun(t, "update-state", "upd", "tuning", "1.0.0", "config", "complete", "--node", "upd-a", "--confirm")
	e, _ := entryOf(t, "upd-a", "upd", "tuning|1.0.0")
	if e.Stage != skyhookv1.StageConfig || e.State != skyhookv1.StateComplete || e.Restarts != 2 || e.Image != "ghcr.io/x/tuning" ||
		strings.Contains(out, "not paused") || !strings.Contains(out, "Successfully updated 1 node(s)") {
		t.Fatalf("update-state --node upd-a: %+v\n%s", e, out)
	}
	if e, _ := entryOf(t, "upd-b", "upd", "tuning|1.0.0"); e.Stage != skyhookv1.StageConfig || e.State != skyhookv1.StateComplete {
		t.Errorf("update-state --node upd-a changed upd-b: %+v", e)
	}

	out = mustRun(t, "update-state", "upd", "driver", "2.0.0", "apply", "in_progress", "--add", "-l", "pool=gpu", "-y")
	if e, ok := entryOf(t, "upd-c", "upd", "driver|2.0.0"); !ok || e.Image != "ghcr.io/x/driver" || e.Stage != skyhookv1.StageApply || e.State != skyhookv1.StateInProgress ||
		!strings.Contains(out, "Nodes to update (2):\n  - upd-a (new entry)\n  - upd-c (new entry)\n") {
		t.Errorf("update-state --add -l pool=gpu: upd-c %+v\n%s", e, out)
	}
	if _, ok := entryOf(t, "upd-a", "upd", "tuning|1.0.0"); !ok {
		t.Errorf("update-state --add dropped the other entries of upd-a")
	}
	if out := mustRun(t, "update-state", "upd", "driver", "2.0.0", "config", "complete", "--add", "--node", "upd-c", "-y"); out !=
		"Warning: node \"upd-c\" already has driver|2.0.0, skipped (without --add it is updated)\nNo nodes to update\n" {
		t.Errorf("update-state --add of an entry there: %q", out)
	}
	if out := mustRun(t, "update-state", "upd", "driver", "2.0.0", "config", "complete", "--node", "nothing", "-y"); out !=
		"Warning: --node nothing: no such node, skipped\nNo nodes matched the specified patterns\n" {
		t.Errorf("update-state --node of no node: %q", out)
	}
	mustRun(t, "update-state", "upd", "tuning", "1.0.0", "uninstall", "erroring", "-y") // every node with the entry
	for _, node := range []string{"upd-a", "upd-b"} {
		if e, _ := entryOf(t, node, "upd", "tuning|1.0.0"); e.Stage != skyhookv1.StageUninstall || e.State != skyhookv1.StateErroring {
			t.Errorf("update-state without a filter: %s %+v", node, e)
		}
	}
	if _, ok := entryOf(t, "upd-c", "upd", "tuning|1.0.0"); ok {
		t.Errorf("update-state without --add created an entry on upd-c")
	}
}

// The record is written only if the node is as it was read: an edit made
// meanwhile is not overwritten.
func TestWriteStateRefusesAStaleRead(t *testing.T) {
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "stale-read", Annotations: map[string]string{
		nwKey("stale").NodeStateAnnotation(): record("tuning", "1.0.0", skyhookv1.StageApply, skyhookv1.StateInProgress)}}})
	read := getNode(t, "stale-read")
	patchNode(t, "stale-read", map[string]any{nwKey("stale").NodeStateAnnotation(): record("tuning", "1.0.0", skyhookv1.StageConfig, skyhookv1.StateComplete)})
	cmd := newRootCommand()
	cmd.SetContext(context.Background())
	err := writeState(cmd, testenv.Client(t, env), read, nwKey("stale").NodeStateAnnotation(), nil)
	if err == nil || !strings.Contains(err.Error(), "the record on the node changed since it was read") {
		t.Fatalf("a write over a stale read: %v", err)
	}
	if e, ok := entryOf(t, "stale-read", "stale", "tuning|1.0.0"); !ok || e.State != skyhookv1.StateComplete {
		t.Errorf("the edit made meanwhile was overwritten: %+v", e)
	}

	// A change elsewhere on the node (a heartbeat, a taint, a label) is no
	// reason to refuse: the write goes on the node as it now is.
	read = getNode(t, "stale-read")
	patchNode(t, "stale-read", map[string]any{"unrelated": "changed"})
	want := skyhookv1.NodeState{"tuning|1.0.0": {Name: "tuning", Version: "1.0.0", Stage: skyhookv1.StageUninstall, State: skyhookv1.StateErroring}}
	if err := writeState(cmd, testenv.Client(t, env), read, nwKey("stale").NodeStateAnnotation(), want); err != nil {
		t.Fatalf("a write after an unrelated change: %v", err)
	}
	if e, _ := entryOf(t, "stale-read", "stale", "tuning|1.0.0"); e.Stage != skyhookv1.StageUninstall || getNode(t, "stale-read").Annotations["unrelated"] != "changed" {
		t.Errorf("after an unrelated change: record %+v, node %v", e, getNode(t, "stale-read").Annotations)
	}
}

// reset --package forgets one package's entries (of one version when
// given), removes a record left empty, reports the nodes with another
// version, and never asks for a batch reset.
func TestResetPackage(t *testing.T) {
	createNodeWright(t, "pkgs", nil, map[string]string{"tuning": "1.0.0", "driver": "2.0.0"})
	both, _ := json.Marshal(skyhookv1.NodeState{
		"tuning|1.0.0": {Name: "tuning", Version: "1.0.0", Stage: skyhookv1.StageConfig, State: skyhookv1.StateComplete},
		"driver|2.0.0": {Name: "driver", Version: "2.0.0", Stage: skyhookv1.StageConfig, State: skyhookv1.StateComplete}})
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "pkgs-a", Annotations: map[string]string{nwKey("pkgs").NodeStateAnnotation(): string(both)}}})
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "pkgs-b", Annotations: map[string]string{
		nwKey("pkgs").NodeStateAnnotation(): record("tuning", "1.0.0", skyhookv1.StageApply, skyhookv1.StateErroring)}}})
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "pkgs-c", Annotations: map[string]string{
		nwKey("pkgs").NodeStateAnnotation(): record("tuning", "0.9.0", skyhookv1.StageConfig, skyhookv1.StateComplete)}}})

	for _, bad := range []struct{ filter, want string }{
		{":1.0.0", "--package: the package name must not be empty (<name> or <name>:<version>)"},
		{"tuning:", `--package "tuning:": the version after ':' must not be empty`},
	} {
		if _, err := run(t, withCluster("reset", "pkgs", "--package", bad.filter, "-y")...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("reset --package %s: %v, want %q", bad.filter, err, bad.want)
		}
	}
	before := getNode(t, "pkgs-a").Annotations[nwKey("pkgs").NodeStateAnnotation()]
	if out := mustRun(t, "--dry-run", "reset", "pkgs", "--package", "driver"); getNode(t, "pkgs-a").Annotations[nwKey("pkgs").NodeStateAnnotation()] != before ||
		!strings.Contains(out, "Nodes with a matching package (1):\n  - pkgs-a\n") || !strings.HasSuffix(out, "[dry-run] No changes applied\n") {
		t.Fatalf("reset --package --dry-run:\n%s", out)
	}
	out := mustRun(t, "reset", "pkgs", "--package", "tuning:1.0.0", "-y")
	if !strings.HasPrefix(out, "NodeWright: pkgs\nPackage filter: tuning:1.0.0\nLeft as they are, with tuning at another version (1):\n  - pkgs-c (0.9.0)\n"+
		"Nodes with a matching package (2):\n  - pkgs-a\n  - pkgs-b\n") || !strings.Contains(out, "Successfully updated 2 node(s)") {
		t.Errorf("reset --package tuning:1.0.0:\n%s", out)
	}
	if _, ok := entryOf(t, "pkgs-a", "pkgs", "tuning|1.0.0"); ok {
		t.Error("reset --package left tuning on pkgs-a")
	}
	if _, ok := entryOf(t, "pkgs-a", "pkgs", "driver|2.0.0"); !ok {
		t.Error("reset --package tuning took driver off pkgs-a")
	}
	if _, ok := getNode(t, "pkgs-b").Annotations[nwKey("pkgs").NodeStateAnnotation()]; ok {
		t.Error("reset --package left an empty record on pkgs-b")
	}
	if _, ok := entryOf(t, "pkgs-c", "pkgs", "tuning|0.9.0"); !ok {
		t.Error("reset --package tuning:1.0.0 took tuning 0.9.0 off pkgs-c")
	}
	if anns := getNodeWright(t, "pkgs").Annotations; anns[skyhookv1.NodeWrights.ResetBatchStateAnnotation()] != "" {
		t.Errorf("reset --package asked for a batch reset: %v", anns)
	}
	if out := mustRun(t, "reset", "pkgs", "--package", "nothing", "-y"); out != "NodeWright: pkgs\nPackage filter: nothing\nno matching package on any node\n" {
		t.Errorf("reset --package of no package: %q", out)
	}
	if _, err := run(t, withCluster("reset", "missing", "--package", "tuning", "-y")...); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("reset --package of a missing rollout: %v", err)
	}
}
