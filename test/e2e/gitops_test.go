package e2e

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-containerregistry/pkg/registry"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/gitserver"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

func skyhookYAML(name, version string) string {
	return fmt.Sprintf(`apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: %s}
spec:
  nodeSelectors: {matchLabels: {pool: e2e}}
  interruptionBudget: {count: 2}
  packages:
    tuning:
      version: %q
      image: ghcr.io/x/tuning
      env: [{name: %s, value: 300ms}]
`, name, version, simnode.DurationEnv)
}

func namespace(t *testing.T, name string) {
	t.Helper()
	if err := k8sClient(t).Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func packageSet(t *testing.T, ns, name string, ref skyhookv1.SourceReference) client.ObjectKey {
	t.Helper()
	return packageSetAt(t, ns, name, "sets", ref)
}

func packageSetAt(t *testing.T, ns, name, path string, ref skyhookv1.SourceReference) client.ObjectKey {
	t.Helper()
	ps := &skyhookv1.PackageSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: skyhookv1.PackageSetSpec{SourceRef: ref, Path: path, Interval: metav1.Duration{Duration: time.Hour},
			RetryInterval: &metav1.Duration{Duration: 2 * time.Second}, Prune: true, Wait: true},
	}
	if err := k8sClient(t).Create(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient(t).Delete(context.Background(), ps) })
	return client.ObjectKeyFromObject(ps)
}

func getPackageSet(t *testing.T, key client.ObjectKey) *skyhookv1.PackageSet {
	ps := &skyhookv1.PackageSet{}
	_ = k8sClient(t).Get(context.Background(), key, ps)
	return ps
}

func skyhookVersion(t *testing.T, name string) (string, bool) {
	sk := &skyhookv1.Skyhook{}
	if err := k8sClient(t).Get(context.Background(), client.ObjectKey{Name: name}, sk); err != nil {
		return "", false
	}
	ready := conditions.IsReady(sk) && sk.Status.ObservedGeneration == sk.Generation
	return sk.Spec.Packages["tuning"].Version, ready
}

// git push of Skyhook manifests → the real source-controller makes an
// artifact → the PackageSet applies it → the Skyhook rolls out on the KWOK
// nodes; a second push moves the version and the rollout follows; a push
// with an invalid manifest changes nothing and the PackageSet says why.
func TestGitPushRollsOut(t *testing.T) {
	ctx := context.Background()
	c := k8sClient(t)
	namespace(t, "fleet")
	url, err := git.Create("fleet")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if _, err := gitserver.Push(work, url, map[string]string{"sets/gpu.yaml": skyhookYAML("e2e-git", "1.0.0")}, "first"); err != nil {
		t.Fatal(err)
	}
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "fleet"},
		Spec: sourcev1.GitRepositorySpec{URL: url, Interval: metav1.Duration{Duration: 2 * time.Second},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
	}
	if err := c.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), repo) })
	key := packageSet(t, "fleet", "gpu", skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"})
	testenv.Eventually(t, "the first push to roll out", 2*time.Minute, func() bool {
		v, ready := skyhookVersion(t, "e2e-git")
		return v == "1.0.0" && ready && conditions.IsReady(getPackageSet(t, key))
	})

	if _, err := gitserver.Push(work, url, map[string]string{"sets/gpu.yaml": skyhookYAML("e2e-git", "1.1.0")}, "second"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the second push to roll out", 2*time.Minute, func() bool {
		v, ready := skyhookVersion(t, "e2e-git")
		return v == "1.1.0" && ready
	})
	var node corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: "e2e-0"}, &node); err != nil || !strings.Contains(node.Annotations[skyhookv1.NodeStateAnnotation("e2e-git")], `"tuning|1.1.0"`) {
		t.Errorf("node e2e-0 was not upgraded: %v %s", err, node.Annotations[skyhookv1.NodeStateAnnotation("e2e-git")])
	}

	commit, err := gitserver.Push(work, url, map[string]string{
		"sets/gpu.yaml":    skyhookYAML("e2e-git", "1.2.0"),
		"sets/broken.yaml": skyhookYAML("e2e-broken", "not-a-version"),
	}, "broken")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the PackageSet to refuse the broken push", 2*time.Minute, func() bool {
		ps := getPackageSet(t, key)
		return strings.Contains(ps.Status.LastAttemptedRevision, commit) && conditions.IsStalled(ps)
	})
	ps := getPackageSet(t, key)
	if msg := conditions.GetMessage(ps, meta.ReadyCondition); !strings.Contains(msg, "broken.yaml: Skyhook/e2e-broken: spec.packages.tuning.version") {
		t.Errorf("Ready says %q; want the broken manifest named", msg)
	}
	if v, _ := skyhookVersion(t, "e2e-git"); v != "1.1.0" {
		t.Errorf("part of the refused push was applied: version %s", v)
	}
}

// skyhook push to an OCI registry → OCIRepository in the real
// source-controller → PackageSet → the Skyhook rolls out.
func TestOCIArtifactIsConsumed(t *testing.T) {
	ctx := context.Background()
	c := k8sClient(t)
	namespace(t, "oci")
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sets", "gpu.yaml"), []byte(skyhookYAML("e2e-oci", "2.0.0")), 0o644); err != nil {
		t.Fatal(err)
	}
	// The CLI itself, built for the test.
	skyhook := filepath.Join(t.TempDir(), "skyhook")
	if err := testenv.BuildCLI(skyhook); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(skyhook, "push", filepath.Join(dir, "sets"), "oci://"+host+"/fleet/gpu:v1", "--insecure",
		"--source", "https://git.example/fleet", "--revision", "main@sha1:feed").CombinedOutput(); err != nil {
		t.Fatalf("skyhook push: %v\n%s", err, out)
	}
	repo := &sourcev1.OCIRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: "oci"},
		Spec: sourcev1.OCIRepositorySpec{URL: "oci://" + host + "/fleet/gpu", Insecure: true,
			Interval: metav1.Duration{Duration: 2 * time.Second}, Reference: &sourcev1.OCIRepositoryRef{Tag: "v1"}},
	}
	if err := c.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), repo) })
	key := packageSetAt(t, "oci", "gpu", ".", skyhookv1.SourceReference{Kind: sourcev1.OCIRepositoryKind, Name: "gpu"})
	testenv.Eventually(t, "the OCI artifact to roll out", 2*time.Minute, func() bool {
		v, ready := skyhookVersion(t, "e2e-oci")
		return v == "2.0.0" && ready && conditions.IsReady(getPackageSet(t, key))
	})

	// skyhook reconcile asks the Flux way (requestedAt) and waits for the
	// operator to say it handled the request.
	out, err := exec.Command(skyhook, "--kubeconfig", env.Kubeconfig, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "client: ") || !strings.Contains(string(out), "(namespace skyhook-system)") {
		t.Errorf("skyhook version: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"reconcile", "packageset", "gpu", "-n", "oci"}, {"reconcile", "skyhook", "e2e-oci"}} {
		out, err := exec.Command(skyhook, append([]string{"--kubeconfig", env.Kubeconfig}, args...)...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "reconciled") {
			t.Errorf("skyhook %v: %v\n%s", args, err, out)
		}
	}
}
