package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// seedNodes makes three nodes with records of Skyhook "fleet"; node-b is
// cordoned by it.
func seedNodes(t *testing.T) {
	t.Helper()
	c := testenv.Client(t, env)
	for i, name := range []string{"node-a", "node-b", "node-c"} {
		state, _ := json.Marshal(skyhookv1.NodeState{"tuning|1.0.0": {Name: "tuning", Version: "1.0.0", Image: "ghcr.io/x/tuning",
			Stage: skyhookv1.StageConfig, State: []skyhookv1.State{skyhookv1.StateComplete, skyhookv1.StateInProgress, skyhookv1.StateErroring}[i], Restarts: int32(i)}})
		status := []string{"complete", "in_progress", "erroring"}[i]
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels:      map[string]string{skyhookv1.StatusKey("fleet"): status},
			Annotations: map[string]string{skyhookv1.NodeStateAnnotation("fleet"): string(state), skyhookv1.StatusKey("fleet"): status}}}
		if name == "node-b" {
			n.Annotations[cordon.Annotation] = "fleet/uid-1"
			n.Spec.Unschedulable = true
		}
		if err := c.Create(context.Background(), n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), n) })
	}
}

func getNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{}
	if err := testenv.Client(t, env).Get(context.Background(), client.ObjectKey{Name: name}, n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNodeCommands(t *testing.T) {
	seedNodes(t)
	out, err := run(t, withCluster("node", "list", "--skyhook", "fleet")...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "node-list.golden", out)
	out, err = run(t, withCluster("node", "status", "node-c")...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "node-status.golden", out)
	out, err = run(t, withCluster("node", "list", "--skyhook", "fleet", "-o", "wide")...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "node-list-wide.golden", out)
	out, err = run(t, withCluster("node", "list", "--skyhook", "fleet", "-o", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []struct {
		Node, Skyhook, Status string
		Ignored               bool
		Packages              []string
	}
	if err := json.Unmarshal([]byte(out), &nodes); err != nil || len(nodes) != 3 || nodes[2].Node != "node-c" || nodes[2].Status != "erroring" ||
		len(nodes[2].Packages) != 1 || nodes[2].Packages[0] != "tuning:1.0.0 config/erroring" {
		t.Errorf("node list -o json: %v\n%s", err, out)
	}
	out, err = run(t, withCluster("node", "status", "node-c", "-o", "yaml")...)
	if err != nil || !strings.Contains(out, "- image: ghcr.io/x/tuning\n  node: node-c\n  package: tuning\n  restarts: 2\n  skyhook: fleet\n  stage: config\n  state: erroring\n  version: 1.0.0\n") {
		t.Errorf("node status -o yaml: %v\n%s", err, out)
	}

	if _, err := run(t, withCluster("node", "ignore", "node-a", "-y")...); err != nil || getNode(t, "node-a").Labels[skyhookv1.IgnoreNodeLabel] != "true" {
		t.Fatalf("ignore: %v", err)
	}
	if msg, err := run(t, withCluster("node", "unignore", "node-a", "--dry-run")...); err != nil || getNode(t, "node-a").Labels[skyhookv1.IgnoreNodeLabel] != "true" || !strings.Contains(msg, "would unignore node node-a") {
		t.Fatalf("unignore --dry-run: %v\n%s", err, msg)
	}
	if _, err := run(t, withCluster("node", "unignore", "node-a", "-y")...); err != nil || getNode(t, "node-a").Labels[skyhookv1.IgnoreNodeLabel] != "" {
		t.Fatalf("unignore: %v", err)
	}

	msg, err := run(t, withCluster("node", "reset", "node-b", "--skyhook", "fleet", "-y")...)
	b := getNode(t, "node-b")
	if err != nil || b.Annotations[skyhookv1.NodeStateAnnotation("fleet")] != "" || b.Spec.Unschedulable || b.Annotations[cordon.Annotation] != "" {
		t.Fatalf("node reset: %v, node %+v\n%s", err, b.ObjectMeta.Annotations, msg)
	}
	if !strings.Contains(msg, "and lift its cordon") {
		t.Errorf("the reset did not say it lifts the cordon: %s", msg)
	}
	if _, err := run(t, withCluster("reset", "fleet", "-y")...); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"node-a", "node-c"} {
		if n := getNode(t, name); n.Annotations[skyhookv1.NodeStateAnnotation("fleet")] != "" || n.Labels[skyhookv1.StatusKey("fleet")] != "" {
			t.Errorf("%s still has the record after reset: %v", name, n.Annotations)
		}
	}
}

func TestPackageCommands(t *testing.T) {
	seedNodes(t)
	out, err := run(t, withCluster("package", "status", "tuning", "--skyhook", "fleet")...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "package-status.golden", out)
	out, err = run(t, withCluster("package", "status", "tuning", "--skyhook", "fleet", "-o", "wide")...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "package-status-wide.golden", out)
	out, err = run(t, withCluster("package", "status", "tuning", "-o", "json")...)
	var records []struct {
		Node, Skyhook, Package, Version, Image, Stage, State string
		Restarts                                             int
	}
	if err != nil || json.Unmarshal([]byte(out), &records) != nil || len(records) != 3 || records[1].Node != "node-b" || records[1].State != "in_progress" ||
		records[1].Restarts != 1 || records[1].Image != "ghcr.io/x/tuning" {
		t.Errorf("package status -o json: %v\n%s", err, out)
	}
	if _, err := run(t, withCluster("package", "rerun", "tuning", "--node", "node-a", "--skyhook", "fleet", "--stage", "config", "-y")...); err != nil {
		t.Fatal(err)
	}
	if got := getNode(t, "node-a").Annotations[skyhookv1.NodeStateAnnotation("fleet")]; !strings.Contains(got, `"stage":"config","state":"in_progress"}`) {
		t.Errorf("rerun from config: record %s", got)
	}
	if _, err := run(t, withCluster("package", "rerun", "tuning", "--node", "node-c", "--skyhook", "fleet", "-y")...); err != nil {
		t.Fatal(err)
	}
	if got := getNode(t, "node-c").Annotations[skyhookv1.NodeStateAnnotation("fleet")]; got != "{}" {
		t.Errorf("rerun from the start: record %s, want it empty", got)
	}
	if _, err := run(t, withCluster("package", "rerun", "tuning", "--node", "node-b", "--skyhook", "fleet", "--stage", "install", "-y")...); err == nil || !strings.Contains(err.Error(), `--stage "install"`) {
		t.Errorf("a bad stage: %v", err)
	}
	if _, err := run(t, withCluster("package", "rerun", "other", "--node", "node-b", "--skyhook", "fleet", "-y")...); err == nil || !strings.Contains(err.Error(), "no record of package other") {
		t.Errorf("a package the node does not have: %v", err)
	}
}
