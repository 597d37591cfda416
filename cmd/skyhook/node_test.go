package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// seedNodes makes the Skyhook "fleet" (package tuning 1.0.0) and three
// nodes with its records: node-a complete and cordoned by an admin, node-b
// in progress and cordoned by fleet, node-c erroring with a stale
// cordon_fleet mark but no cordon.
func seedNodes(t *testing.T) *skyhookv1.Skyhook {
	t.Helper()
	c := testenv.Client(t, env)
	ctx := context.Background()
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}, Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{
		"tuning": {PackageRef: skyhookv1.PackageRef{Version: "1.0.0"}, Image: "ghcr.io/x/tuning"},
		"driver": {PackageRef: skyhookv1.PackageRef{Version: "2.0.0"}, Image: "ghcr.io/x/driver"},
	}}}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	for i, name := range []string{"node-a", "node-b", "node-c"} {
		state, _ := json.Marshal(skyhookv1.NodeState{"tuning|1.0.0": {Name: "tuning", Version: "1.0.0", Image: "ghcr.io/x/tuning",
			Stage: skyhookv1.StageConfig, State: []skyhookv1.State{skyhookv1.StateComplete, skyhookv1.StateInProgress, skyhookv1.StateErroring}[i], Restarts: int32(i)}})
		status := []string{"complete", "in_progress", "erroring"}[i]
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels:      map[string]string{skyhookv1.StatusKey("fleet"): status},
			Annotations: map[string]string{skyhookv1.NodeStateAnnotation("fleet"): string(state), skyhookv1.StatusKey("fleet"): status}}}
		switch name {
		case "node-a":
			n.Spec.Unschedulable = true // an admin's cordon: no signature, no mark
		case "node-b":
			n.Annotations[cordon.Annotation] = cordon.Owner(sk)
			n.Annotations[skyhookv1.CordonAnnotation("fleet")] = "true"
			n.Spec.Unschedulable = true
		case "node-c":
			n.Annotations[skyhookv1.CordonAnnotation("fleet")] = "true" // left behind, no cordon
		}
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), n) })
	}
	return sk
}

func getNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{}
	if err := testenv.Client(t, env).Get(context.Background(), client.ObjectKey{Name: name}, n); err != nil {
		t.Fatal(err)
	}
	return n
}

func getSkyhook(t *testing.T, name string) *skyhookv1.Skyhook {
	t.Helper()
	sk := &skyhookv1.Skyhook{}
	if err := testenv.Client(t, env).Get(context.Background(), client.ObjectKey{Name: name}, sk); err != nil {
		t.Fatal(err)
	}
	return sk
}

// mustRun runs the CLI and fails the test on an error.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, withCluster(args...)...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return out
}

// node list and node status print NodeWright's plugin's tables and JSON;
// node arguments are names or regular expressions.
func TestNodeViews(t *testing.T) {
	seedNodes(t)
	golden(t, "node-list.golden", mustRun(t, "node", "list", "--skyhook", "fleet"))
	golden(t, "node-list-wide.golden", mustRun(t, "node", "list", "--skyhook", "fleet", "-o", "wide"))
	for _, args := range [][]string{{"node", "list", "--skyhook", "fleet", "-o", "json"}, {"-o", "JSON", "node", "list", "--skyhook", "fleet"}} {
		out := mustRun(t, args...)
		var list struct {
			SkyhookName string
			Nodes       []map[string]any
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil || list.SkyhookName != "fleet" || len(list.Nodes) != 3 {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		c := list.Nodes[2]
		if c["nodeName"] != "node-c" || c["status"] != "erroring" || c["packagesComplete"] != 0.0 || c["packagesTotal"] != 1.0 || c["restarts"] != 2.0 {
			t.Errorf("%v: node-c is %v", args, c)
		}
	}
	if out := mustRun(t, "node", "list"); !strings.Contains(out, "Skyhook: fleet\n\nSummary: 3 nodes (1 complete, 1 erroring, 1 in progress)") {
		t.Errorf("node list without --skyhook:\n%s", out)
	}
	if out := mustRun(t, "node", "list", "--skyhook", "none"); out != "No nodes found for Skyhook \"none\"\n" {
		t.Errorf("node list of a Skyhook without nodes: %q", out)
	}
	if out := mustRun(t, "node", "list", "--skyhook", "none", "-o", "json"); !strings.Contains(out, `"nodes": []`) {
		t.Errorf("node list -o json of a Skyhook without nodes: %q", out)
	}

	golden(t, "node-status.golden", mustRun(t, "node", "status", "node-c"))
	golden(t, "node-status-wide.golden", mustRun(t, "node", "status", "node-[ab]", "-o", "wide"))
	out := mustRun(t, "node", "status", "--skyhook", "fleet", "-o", "json")
	var entries []struct {
		NodeName, SkyhookName, Status   string
		PackagesComplete, PackagesTotal int
		Packages                        []struct{ Name, Version, Stage, State, Image string }
	}
	if err := json.Unmarshal([]byte(out), &entries); err != nil || len(entries) != 3 || entries[1].NodeName != "node-b" || entries[1].Status != "in_progress" ||
		len(entries[1].Packages) != 1 || entries[1].Packages[0].Image != "ghcr.io/x/tuning" {
		t.Errorf("node status -o json: %v\n%s", err, out)
	}
	if out := mustRun(t, "node", "status", "node-c", "-o", "yaml"); !strings.Contains(out, "- cordoned: false\n  kind: Skyhook\n  nodeName: node-c\n  packages:\n  - image: ghcr.io/x/tuning\n    name: tuning\n") ||
		!strings.Contains(out, "\n  runtimeRequiredCordon: false\n") {
		t.Errorf("node status -o yaml:\n%s", out)
	}
	if out := mustRun(t, "node", "status", "nothing-.*"); out != "No nodes matched the specified patterns\n" {
		t.Errorf("node status of no node: %q", out)
	}
	if out := mustRun(t, "node", "status", "node-a", "--skyhook", "other"); out != "No Skyhook activity found on specified nodes\n" {
		t.Errorf("node status of no record: %q", out)
	}

	if _, err := run(t, withCluster("-o", "xml", "node", "list")...); err == nil || err.Error() != `invalid output format "xml": --output takes table, wide, json, yaml` {
		t.Errorf("-o xml: %v", err)
	}
	if _, err := run(t, withCluster("node", "status", "node-[")...); err == nil || !strings.Contains(err.Error(), `invalid regex pattern "node-["`) {
		t.Errorf("a broken pattern: %v", err)
	}

	// A record that cannot be read is left out, said with -v.
	patchNode(t, "node-a", map[string]any{skyhookv1.NodeStateAnnotation("fleet"): "not json"})
	if out := mustRun(t, "node", "list", "--skyhook", "fleet"); strings.Contains(out, "node-a") || strings.Contains(out, "Warning") {
		t.Errorf("an unreadable record without -v:\n%s", out)
	}
	if out := mustRun(t, "node", "list", "--skyhook", "fleet", "-v"); !strings.HasPrefix(out, `Warning: skipping node "node-a" - invalid annotation: invalid character`) {
		t.Errorf("an unreadable record with -v:\n%s", out)
	}
}

// ignore and unignore take names and patterns and do not ask.
func TestNodeIgnore(t *testing.T) {
	seedNodes(t)
	ignored := func(name string) bool { return getNode(t, name).Labels[skyhookv1.IgnoreNodeLabel] == "true" }
	out := mustRun(t, "node", "ignore", "node-a", "node-c")
	if !ignored("node-a") || ignored("node-b") || !ignored("node-c") || !strings.Contains(out, "Ignoring 2 node(s):\n  - node-a\n  - node-c\n") ||
		!strings.Contains(out, "Successfully ignored 2 node(s)") {
		t.Fatalf("ignore node-a node-c:\n%s", out)
	}
	if out := mustRun(t, "node", "ignore", "node-.*"); !ignored("node-b") || !strings.Contains(out, "  node-a: already ignored\n") || !strings.Contains(out, "Successfully ignored 1 node(s)") {
		t.Fatalf("ignore node-.*:\n%s", out)
	}
	if out := mustRun(t, "--dry-run", "node", "unignore", "node-a"); !ignored("node-a") || !strings.Contains(out, "[dry-run] No changes applied") {
		t.Fatalf("unignore --dry-run:\n%s", out)
	}
	if out := mustRun(t, "node", "unignore", "node-a", "node-b", "node-c", "-y"); ignored("node-a") || ignored("node-b") || ignored("node-c") || // -y: accepted, nothing asked
		!strings.Contains(out, "Successfully unignored 3 node(s)") {
		t.Fatalf("unignore:\n%s", out)
	}
	if out := mustRun(t, "node", "unignore", "node-a", "--confirm"); !strings.Contains(out, "  node-a: not ignored\n") {
		t.Errorf("unignore of a node not ignored:\n%s", out)
	}
	if out := mustRun(t, "node", "ignore", "missing"); out != "No nodes matched the specified patterns\n" {
		t.Errorf("ignore of no node: %q", out)
	}
}

// node reset and reset forget the records, keep the cordon of a Skyhook
// that still selects the node (its re-run lifts it) and leave a node with
// nothing else alone, drop a stale cordon_ mark, leave an admin's cordon,
// and (reset) ask the operator to start the batches over.
func TestNodeReset(t *testing.T) {
	sk := seedNodes(t)
	record := func(name string) string { return getNode(t, name).Annotations[skyhookv1.NodeStateAnnotation("fleet")] }

	out, err := runWithInput(t, "n\n", withCluster("node", "reset", "node-b", "--skyhook", "fleet")...)
	if err != nil || record("node-b") == "" || !strings.HasSuffix(out, "Continue? [y/N]: Aborted.\n") {
		t.Fatalf("declined node reset: %v\n%s", err, out)
	}
	if _, err := run(t, withCluster("node", "reset", "node-b")...); err == nil || err.Error() != "--nodewright flag is required (--skyhook is its alias)" {
		t.Errorf("node reset without --nodewright: %v", err)
	}
	if _, err := run(t, withCluster("node", "reset", "node-b", "--skyhook", "fleet", "--nodewright", "other")...); err == nil ||
		err.Error() != `--nodewright "other" and --skyhook "fleet" name different rollouts: give one of them` {
		t.Errorf("node reset naming two rollouts: %v", err)
	}
	out = mustRun(t, "node", "reset", "node-b", "--skyhook", "fleet", "-y")
	b := getNode(t, "node-b")
	if b.Annotations[skyhookv1.NodeStateAnnotation("fleet")] != "" || b.Labels[skyhookv1.StatusKey("fleet")] != "" || !b.Spec.Unschedulable ||
		b.Annotations[cordon.Annotation] != cordon.Owner(sk) || b.Annotations[skyhookv1.CordonAnnotation("fleet")] != "true" {
		t.Fatalf("node reset: node %v %v unschedulable %v\n%s", b.Labels, b.Annotations, b.Spec.Unschedulable, out)
	}
	if !strings.Contains(out, "Nodes to reset (1):\n  - node-b (1 packages, its cordon stays for the re-run to lift)\n") || !strings.Contains(out, `Successfully reset 1 node(s) for Skyhook "fleet"`) {
		t.Errorf("node reset output:\n%s", out)
	}
	// Only the kept cordon is left: nothing to reset.
	if out := mustRun(t, "node", "reset", "node-b", "--skyhook", "fleet", "-y"); out != "No nodes have state for Skyhook \"fleet\"\n" {
		t.Errorf("node reset of a node without a record: %q", out)
	}

	out = mustRun(t, "reset", "fleet", "--skip-batch-reset", "--dry-run")
	if record("node-a") == "" || strings.Contains(out, "Batch state") || !strings.Contains(out, "[dry-run] No changes applied") {
		t.Fatalf("reset --dry-run:\n%s", out)
	}
	out = mustRun(t, "reset", "fleet") // no input: a no
	if record("node-a") == "" || !strings.Contains(out, "\nBatch state will also be reset (use --skip-batch-reset to preserve)\n") || !strings.HasSuffix(out, "Aborted.\n") {
		t.Fatalf("reset without an answer:\n%s", out)
	}
	out = mustRun(t, "reset", "fleet", "--confirm")
	a, c := getNode(t, "node-a"), getNode(t, "node-c")
	if record("node-a") != "" || record("node-c") != "" || !a.Spec.Unschedulable || c.Annotations[skyhookv1.CordonAnnotation("fleet")] != "" || c.Spec.Unschedulable ||
		!strings.Contains(out, "Nodes to reset (2):\n  - node-a (1 packages)\n  - node-c (1 packages)\n") {
		t.Fatalf("reset: node-a %v unschedulable %v, node-c %v\n%s", a.Annotations, a.Spec.Unschedulable, c.Annotations, out)
	}
	requested, err := time.Parse(time.RFC3339, getSkyhook(t, "fleet").Annotations[skyhookv1.ResetBatchStateAnnotation])
	if err != nil || time.Since(requested) > time.Minute || !strings.Contains(out, `Batch state reset requested for Skyhook "fleet"`) {
		t.Errorf("reset did not ask for a batch reset: %v\n%s", err, out)
	}

	// --skip-batch-reset leaves the batches alone.
	clearBatchReset(t, sk)
	patchNode(t, "node-a", map[string]any{skyhookv1.NodeStateAnnotation("fleet"): "{}"})
	if out := mustRun(t, "reset", "fleet", "-y", "--skip-batch-reset"); record("node-a") != "" || getSkyhook(t, "fleet").Annotations[skyhookv1.ResetBatchStateAnnotation] != "" {
		t.Errorf("reset --skip-batch-reset:\n%s", out)
	}
	if out := mustRun(t, "reset", "fleet", "-y"); out != "No nodes have state for Skyhook \"fleet\"\n" {
		t.Errorf("reset without records: %q", out)
	}
}

func clearBatchReset(t *testing.T, sk *skyhookv1.Skyhook) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"` + skyhookv1.ResetBatchStateAnnotation + `":null}}}`)
	if err := testenv.Client(t, env).Patch(context.Background(), sk, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

func patchNode(t *testing.T, name string, annotations map[string]any) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err := testenv.Client(t, env).Patch(context.Background(), &corev1.Node{ObjectMeta: objectMeta(name)}, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}

// deployment-policy reset (dp reset) shows the batch state, asks, and
// asks the operator to start the batches over.
func TestDeploymentPolicyReset(t *testing.T) {
	ctx := context.Background()
	c := testenv.Client(t, env)
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "batches"}, Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{
		"tuning": {PackageRef: skyhookv1.PackageRef{Version: "1.0.0"}, Image: "ghcr.io/x/tuning"}}}}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	if out := mustRun(t, "dp", "reset", "batches", "-y"); out != "Skyhook \"batches\" has no compartment statuses to reset\n" {
		t.Errorf("dp reset without compartments: %q", out)
	}
	sk.Status.CompartmentStatuses = map[string]skyhookv1.CompartmentProgress{
		"__default__": {Matched: 4, Ceiling: 2, Completed: 3, ProgressPercent: 75,
			BatchState: &skyhookv1.BatchProgress{CurrentBatch: 3, LastBatchSize: 2, CompletedNodes: 3, FailedNodes: 1, ConsecutiveFailures: 1}},
		"canary": {Matched: 1, Ceiling: 1},
	}
	if err := c.Status().Update(ctx, sk); err != nil {
		t.Fatal(err)
	}
	requested := func() string { return getSkyhook(t, "batches").Annotations[skyhookv1.ResetBatchStateAnnotation] }

	out := mustRun(t, "deployment-policy", "reset", "batches")
	if requested() != "" || !strings.HasPrefix(out, "Skyhook: batches\nCompartments: 2 total, 1 with batch state\n\nCurrent batch state:\n"+
		"  - __default__: batch 3, 3 completed, 1 failed\n") || !strings.HasSuffix(out, "Continue? [y/N]: Aborted.\n") {
		t.Fatalf("dp reset without an answer:\n%s", out)
	}
	if out := mustRun(t, "--dry-run", "dp", "reset", "batches"); requested() != "" || !strings.Contains(out, "[dry-run] Would reset batch state to:\n  - CurrentBatch: 1\n") ||
		!strings.HasSuffix(out, "[dry-run] No changes applied\n") {
		t.Fatalf("dp reset --dry-run:\n%s", out)
	}
	out, err := runWithInput(t, "yes\n", withCluster("dp", "reset", "batches")...)
	at, perr := time.Parse(time.RFC3339, requested())
	if err != nil || perr != nil || time.Since(at) > time.Minute || !strings.Contains(out, `Batch state reset requested for Skyhook "batches"`) {
		t.Fatalf("dp reset: %v, annotation %q\n%s", err, requested(), out)
	}
	if _, err := run(t, withCluster("dp", "reset", "missing", "--confirm")...); err == nil || err.Error() != `no NodeWright or Skyhook named "missing": not found` {
		t.Errorf("dp reset of a missing Skyhook: %v", err)
	}
}

func TestPackageCommands(t *testing.T) {
	seedNodes(t)
	golden(t, "package-status.golden", mustRun(t, "package", "status", "tuning", "--skyhook", "fleet"))
	golden(t, "package-status-wide.golden", mustRun(t, "package", "status", "tuning", "--skyhook", "fleet", "-o", "wide"))
	out := mustRun(t, "package", "status", "tuning", "--skyhook", "fleet", "-o", "json")
	var records []map[string]any
	if err := json.Unmarshal([]byte(out), &records); err != nil || len(records) != 3 {
		t.Fatalf("package status -o json: %v\n%s", err, out)
	}
	for key, want := range map[string]any{"name": "tuning", "version": "1.0.0", "image": "ghcr.io/x/tuning", "stage": "config", "state": "in_progress",
		"restarts": 1.0, "nodeName": "node-b", "skyhookName": "fleet"} {
		if records[1][key] != want {
			t.Errorf("package status -o json: %s = %v, want %v", key, records[1][key], want)
		}
	}
	out = mustRun(t, "package", "status", "tuning", "--skyhook", "fleet", "--node", "node-a", "--node", "node-[c]", "-o", "json")
	if err := json.Unmarshal([]byte(out), &records); err != nil || len(records) != 2 || records[0]["nodeName"] != "node-a" || records[1]["nodeName"] != "node-c" {
		t.Errorf("package status --node --node: %v\n%s", err, out)
	}
	if out := mustRun(t, "package", "status", "tuning"); !strings.HasPrefix(out, "Skyhook: fleet\nPackages: driver:2.0.0, tuning:1.0.0\n") {
		t.Errorf("package status without --skyhook:\n%s", out)
	}
	if out := mustRun(t, "package", "status", "driver", "--skyhook", "fleet"); out != "No package status found for skyhook \"fleet\"\n" {
		t.Errorf("package status of a package without records: %q", out)
	}

	record := func(name string) string { return getNode(t, name).Annotations[skyhookv1.NodeStateAnnotation("fleet")] }
	before := record("node-a")
	if out := mustRun(t, "package", "rerun", "tuning", "--skyhook", "fleet", "--node", "node-a", "--stage", "config"); record("node-a") != before ||
		!strings.HasSuffix(out, "This will reset package state to re-run from the 'config' stage.\nContinue? [y/N]: Aborted.\n") {
		t.Fatalf("rerun without an answer:\n%s", out)
	}
	if out := mustRun(t, "package", "rerun", "tuning", "--skyhook", "fleet", "--node", "node-a", "--dry-run"); record("node-a") != before ||
		!strings.Contains(out, "Nodes to reset (1):\n  - node-a (current state: complete, stage: config)\n") || !strings.Contains(out, "[dry-run] No changes applied") {
		t.Fatalf("rerun --dry-run:\n%s", out)
	}
	mustRun(t, "package", "rerun", "tuning", "--node", "node-a", "--skyhook", "fleet", "--stage", "config", "-y")
	if got := record("node-a"); !strings.Contains(got, `"stage":"config","state":"in_progress"}`) {
		t.Errorf("rerun from config: record %s", got)
	}
	out = mustRun(t, "package", "rerun", "tuning", "--node", "node-[bc]", "--skyhook", "fleet", "--confirm")
	if record("node-b") != "" || record("node-c") != "" || !strings.Contains(out, `Successfully reset package "tuning" on 2 node(s)`) {
		t.Errorf("rerun from the start: records %q %q, want none\n%s", record("node-b"), record("node-c"), out)
	}
	if out := mustRun(t, "package", "rerun", "tuning", "--node", "node-b", "--skyhook", "fleet", "-y"); out != "No nodes matched the specified patterns\n" {
		t.Errorf("rerun on a node without a record: %q", out)
	}
	if out := mustRun(t, "package", "rerun", "driver", "--node", "node-a", "--skyhook", "fleet", "-y"); out != "Package \"driver\" (version 2.0.0) has no state on matched nodes\n" {
		t.Errorf("rerun of a package without records: %q", out)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--node", "node-b", "--skyhook", "fleet", "--stage", "install"}, `invalid stage "install"`},
		{[]string{"--skyhook", "fleet"}, "at least one --node flag is required"},
		{[]string{"--node", "node-b"}, "--nodewright flag is required"},
	} {
		if _, err := run(t, withCluster(append([]string{"package", "rerun", "tuning", "-y"}, bad.args...)...)...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("rerun %v: %v, want %q", bad.args, err, bad.want)
		}
	}
	if _, err := run(t, withCluster("package", "rerun", "other", "--node", "node-b", "--skyhook", "fleet", "-y")...); err == nil || err.Error() != `package "other" not found in skyhook "fleet"` {
		t.Errorf("a package the Skyhook does not have: %v", err)
	}
}
