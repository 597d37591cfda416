package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// The Flux condition helpers work on the API types.
var (
	_ conditions.Setter = &skyhookv1.Skyhook{}
	_ conditions.Setter = &skyhookv1.DeploymentPolicy{}
	_ conditions.Setter = &skyhookv1.PackageSet{}
)

// kubectl shows Skyhooks with Flux-style READY/STATUS columns taken from the
// Ready condition, then the reference summary and priority; -o wide adds the
// packages and the policy; the fluxcd category lists them with Flux's own
// kinds, and skyhook-all with the other kinds of this API.
func TestSkyhookPrinterColumnsInKubectl(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	var sk skyhookv1.Skyhook
	createAndGet(t, c, skyhookYAML("printed", `
  packages:
    tuning:
      version: 1.1.0
      image: ghcr.io/x/tuning
`), &sk)
	conditions.MarkTrue(&sk, meta.ReadyCondition, meta.SucceededReason, "Applied to 3/3 nodes")
	sk.Status.ObservedGeneration = sk.Generation
	sk.Status.Status = skyhookv1.StatusComplete
	sk.Status.CompleteNodes = "3/3"
	sk.Status.NodesInProgress = 0
	sk.Status.PackageList = "tuning:1.1.0"
	if err := c.Status().Update(ctx, &sk); err != nil {
		t.Fatal(err)
	}

	// What upstream's users type: the singular with a name, describe, and
	// the plural; no category may shadow them.
	for _, kind := range []string{"skyhook", "skyhooks", "skyhook.skyhook.nvidia.com"} {
		table := kubectl(t, "get", kind, "printed")
		wantRow(t, table, []string{"NAME", "READY", "STATUS", "STATE", "COMPLETE", "IN-PROGRESS", "PRIORITY", "AGE"},
			[]string{"printed", "True", "Applied to 3/3 nodes", "complete", "3/3", "0", "200"})
	}
	if described := kubectl(t, "describe", "skyhook", "printed"); !strings.Contains(described, "Name:") || !strings.Contains(described, "printed") {
		t.Errorf("kubectl describe skyhook printed:\n%s", described)
	}
	if listed := kubectl(t, "get", "skyhook", "-o", "name"); !strings.Contains(listed, "skyhook.skyhook.nvidia.com/printed") {
		t.Errorf("kubectl get skyhook does not list the Skyhook:\n%s", listed)
	}

	wide := kubectl(t, "get", "skyhooks", "printed", "-o", "wide")
	wantRow(t, wide, []string{"NAME", "READY", "STATUS", "STATE", "COMPLETE", "IN-PROGRESS", "PRIORITY", "PACKAGES", "POLICY", "AGE"},
		[]string{"printed", "True", "Applied to 3/3 nodes", "complete", "3/3", "0", "200", "tuning:1.1.0"})

	for _, category := range []string{"fluxcd", "skyhook-all"} {
		names := kubectl(t, "get", category, "-A", "-o", "name")
		if !strings.Contains(names, "skyhook.skyhook.nvidia.com/printed") {
			t.Errorf("kubectl get %s does not list the Skyhook:\n%s", category, names)
		}
	}
}

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := env.Kubectl(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantRow checks the header of a kubectl table and that its first row starts
// with the given cells (columns are separated by runs of spaces; a cell may
// contain single spaces).
func wantRow(t *testing.T, table string, header, cells []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) < 2 {
		t.Fatalf("want a header and a row, got:\n%s", table)
	}
	if got := splitColumns(lines[0]); strings.Join(got, "|") != strings.Join(header, "|") {
		t.Fatalf("header = %q, want %q", got, header)
	}
	row := splitColumns(lines[1])
	if len(row) < len(cells) || strings.Join(row[:len(cells)], "|") != strings.Join(cells, "|") {
		t.Fatalf("row = %q, want it to start with %q", row, cells)
	}
}

func splitColumns(line string) []string {
	var cols []string
	for _, f := range strings.Split(line, "   ") {
		if f = strings.TrimSpace(f); f != "" {
			cols = append(cols, f)
		}
	}
	return cols
}
