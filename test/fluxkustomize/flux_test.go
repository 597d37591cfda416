package fluxkustomize

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/test/testenv"
)

// flux runs the flux CLI against the cluster, as a person would with its
// kubeconfig, and returns what it prints.
func flux(t *testing.T, args ...string) string {
	t.Helper()
	args = append(args, "--kubeconfig", env.Kubeconfig, "--cache-dir", filepath.Join(env.Dir, "flux-cache"))
	cmd := exec.Command(fluxCLI, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("flux %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// fluxGetKustomization is the row of the fleet's Kustomization in what
// flux get kustomizations -A prints, by column header, and the whole
// output.
func fluxGetKustomization(t *testing.T, f *fleet) (map[string]string, string) {
	t.Helper()
	out := flux(t, "get", "kustomizations", "-A")
	for _, row := range table(out) {
		if row["NAMESPACE"] == f.ns && row["NAME"] == kustomizationName {
			return row, out
		}
	}
	t.Fatalf("flux get kustomizations -A does not list %s/%s:\n%s", f.ns, kustomizationName, out)
	return nil, out
}

// waitReady waits for flux get to show the fleet's Kustomization Ready at
// the commit, and returns its row and the output. kustomize-controller
// writes the conditions before the other status fields, so READY can be
// True a moment before REVISION is filled in. A Ready condition False
// fails the test at once (nothing waited for this way should fail), but
// for what a retry fixes: the source without an artifact yet, or the
// Kustomization depended on not Ready yet, as all are created together.
// (Before the first reconcile, without the condition, flux prints READY
// False "waiting to be reconciled".)
func waitReady(t *testing.T, f *fleet, commit string, timeout time.Duration) (map[string]string, string) {
	t.Helper()
	var row map[string]string
	var out string
	testenv.Eventually(t, "flux get to show the Kustomization Ready", timeout, func() bool {
		row, out = fluxGetKustomization(t, f)
		if ready := condition(f.kustomization(t).Conditions, meta.ReadyCondition); ready.Status == metav1.ConditionFalse && !retried[ready.Reason] {
			t.Fatalf("the Kustomization failed: %s\n%s", ready.Message, out)
		}
		return row["READY"] == "True" && row["REVISION"] == revision(commit)
	})
	return row, out
}

// retried are the reasons of a Ready=False that kustomize-controller
// retries without a change.
var retried = map[string]bool{meta.ArtifactFailedReason: true, meta.DependencyNotReadyReason: true}

// table reads flux's tables: a header line, then rows, the cells padded
// and separated by tabs.
func table(out string) []map[string]string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := cells(lines[0])
	var rows []map[string]string
	for _, line := range lines[1:] {
		row := map[string]string{}
		for i, cell := range cells(line) {
			if i < len(header) {
				row[header[i]] = cell
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func cells(line string) []string {
	parts := strings.Split(line, "\t")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// revision is how flux prints a Git revision: the hash cut to 8.
func revision(commit string) string { return "main@sha1:" + commit[:8] }
