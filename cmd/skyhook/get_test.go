package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares out with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, out string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("%s differs (go test -update to accept):\n got:\n%s\nwant:\n%s", name, out, want)
	}
}

// withCluster runs the command against the test cluster.
func withCluster(args ...string) []string {
	return append([]string{"--kubeconfig", env.Kubeconfig}, args...)
}

// seed makes two Skyhooks and a PackageSet with the status an operator
// would have written.
func seed(t *testing.T) {
	t.Helper()
	c := testenv.Client(t, env)
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	mk := func(name string, ready bool, msg string, annotations map[string]string) {
		sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
			Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{"tuning": {PackageRef: skyhookv1.PackageRef{Version: "1.0.0"}, Image: "ghcr.io/x/tuning"}}}}
		if err := c.Create(ctx, sk); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
		sk.Status.PackageList = "tuning:1.0.0"
		sk.Status.ObservedGeneration = sk.Generation
		sk.Status.Status, sk.Status.CompleteNodes = skyhookv1.StatusInProgress, "1/3"
		if ready {
			sk.Status.Status, sk.Status.CompleteNodes = skyhookv1.StatusComplete, "3/3"
			conditions.MarkTrue(sk, meta.ReadyCondition, meta.SucceededReason, "%s", msg)
		} else {
			conditions.MarkFalse(sk, meta.ReadyCondition, meta.ProgressingReason, "%s", msg)
		}
		if err := c.Status().Update(ctx, sk); err != nil {
			t.Fatal(err)
		}
	}
	mk("gpu", true, "Applied to 3/3 nodes", nil)
	mk("net", false, "1/3 nodes complete, 1 in progress", map[string]string{skyhookv1.PauseAnnotation: "true"})
	ps := &skyhookv1.PackageSet{ObjectMeta: metav1.ObjectMeta{Name: "sets", Namespace: "fleet"},
		Spec: skyhookv1.PackageSetSpec{SourceRef: skyhookv1.SourceReference{Kind: "GitRepository", Name: "fleet"}, Interval: metav1.Duration{Duration: time.Minute}}}
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ps) })
	ps.Status.LastAppliedRevision = "main@sha1:abc"
	conditions.MarkTrue(ps, meta.ReadyCondition, meta.ReconciliationSucceededReason, "Applied revision: main@sha1:abc")
	if err := c.Status().Update(ctx, ps); err != nil {
		t.Fatal(err)
	}
}

func TestGet(t *testing.T) {
	seed(t)
	out, err := run(t, withCluster("get", "all", "-A")...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "get-all.golden", out)
	out, err = run(t, withCluster("get", "skyhooks", "--status-selector", "ready=false")...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "get-not-ready.golden", out)
	out, err = run(t, withCluster("get", "all", "-A", "-o", "wide")...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "get-wide.golden", out)

	out, err = run(t, withCluster("get", "packagesets", "-n", "fleet", "-o", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	for _, key := range []string{"kind", "namespace", "name", "revision", "suspended", "ready", "message"} {
		if _, ok := rows[0][key]; !ok {
			t.Errorf("-o json lacks %q: %s", key, out)
		}
	}
	if out, err := run(t, withCluster("get", "packagesets", "-n", "empty", "-o", "json")...); err != nil || out != "[]\n" {
		t.Errorf("-o json of nothing: %v, %q, want []", err, out)
	}
	if _, err := run(t, withCluster("get", "skyhooks", "--status-selector", "healthy")...); err == nil || !strings.Contains(err.Error(), "want ready=true") {
		t.Errorf("a bad selector: %v", err)
	}
}

// pause asks first (a no, or no answer at all, does nothing and is not an
// error), -y does not ask, --dry-run changes nothing, resume undoes it.
func TestSteering(t *testing.T) {
	seed(t)
	c := testenv.Client(t, env)
	paused := func() bool {
		sk := &skyhookv1.Skyhook{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: "gpu"}, sk); err != nil {
			t.Fatal(err)
		}
		return sk.Annotations[skyhookv1.PauseAnnotation] == "true"
	}
	for _, input := range []string{"n\n", ""} {
		out, err := runWithInput(t, input, withCluster("pause", "gpu")...)
		if err != nil || paused() || out != "This will pause Skyhook \"gpu\" (set the annotation skyhook.nvidia.com/pause=true). Continue? [y/N]: Aborted.\n" {
			t.Fatalf("declined (%q): %v, paused %v\n%s", input, err, paused(), out)
		}
	}
	if msg, err := run(t, withCluster("pause", "gpu", "--dry-run")...); err != nil || paused() || !strings.Contains(msg, `[dry-run] Would pause Skyhook "gpu"`) {
		t.Fatalf("dry run: %v, paused %v\n%s", err, paused(), msg)
	}
	if msg, err := runWithInput(t, "y\n", withCluster("pause", "gpu")...); err != nil || !paused() || !strings.HasSuffix(msg, "Skyhook \"gpu\" paused\n") {
		t.Fatalf("confirmed: %v, paused %v\n%s", err, paused(), msg)
	}
	if msg, err := run(t, withCluster("resume", "gpu", "--confirm")...); err != nil || paused() || msg != "Skyhook \"gpu\" resumed\n" { // NodeWright's spelling of -y
		t.Fatalf("resume --confirm: %v, paused %v\n%s", err, paused(), msg)
	}
	if msg, err := run(t, withCluster("resume", "gpu")...); err != nil || msg != "Skyhook gpu: nothing to resume\n" {
		t.Errorf("resume of a Skyhook not paused: %v\n%s", err, msg)
	}
	if _, err := run(t, withCluster("disable", "missing", "-y")...); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a missing Skyhook: %v", err)
	}
}
