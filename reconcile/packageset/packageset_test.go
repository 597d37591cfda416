package packageset_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/testserver"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// source plays source-controller for one GitRepository: it serves tarballs
// and writes the GitRepository's status with each new artifact.
type source struct {
	t    testing.TB
	c    client.Client
	srv  *testserver.ArtifactServer
	repo *sourcev1.GitRepository
}

func newSource(t testing.TB, namespace, name string) *source {
	t.Helper()
	return newSourceIn(t, k8sClient(t), namespace, name)
}

// newSourceIn is newSource in the cluster of c.
func newSourceIn(t testing.TB, c client.Client, namespace, name string) *source {
	t.Helper()
	srv, err := testserver.NewTempArtifactServer()
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Stop)
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       sourcev1.GitRepositorySpec{URL: "https://git.example.invalid/fleet", Interval: metav1.Duration{Duration: time.Hour}},
	}
	if err := c.Create(context.Background(), repo); err != nil {
		t.Fatal(err)
	}
	return &source{t: t, c: c, srv: srv, repo: repo}
}

// publish serves the files as the artifact of revision.
func (s *source) publish(revision string, files map[string]string) {
	s.t.Helper()
	var list []testserver.File
	for name, body := range files {
		list = append(list, testserver.File{Name: name, Body: body})
	}
	name, err := s.srv.ArtifactFromFiles(list)
	if err != nil {
		s.t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(s.srv.Root(), name))
	if err != nil {
		s.t.Fatal(err)
	}
	url, err := s.srv.URLForFile(name)
	if err != nil {
		s.t.Fatal(err)
	}
	s.repo.Status.Artifact = &meta.Artifact{Path: name, URL: url, Revision: revision,
		Digest: fmt.Sprintf("sha256:%x", sha256.Sum256(data)), LastUpdateTime: metav1.Now()}
	conditions.MarkTrue(s.repo, meta.ReadyCondition, meta.SucceededReason, "stored artifact for revision %s", revision)
	if err := s.c.Status().Update(context.Background(), s.repo); err != nil {
		s.t.Fatal(err)
	}
}

func skyhookManifest(name, version string) string {
	return fmt.Sprintf(`apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: %s}
spec:
  nodeSelectors: {matchLabels: {pool: packageset-none}}
  packages:
    tuning: {version: %q, image: ghcr.io/x/tuning}
`, name, version)
}

const policyManifest = `apiVersion: skyhook.nvidia.com/v1alpha1
kind: DeploymentPolicy
metadata: {name: ps-policy}
spec: {default: {budget: {count: 1}}}
`

func waitPackageSet(t *testing.T, key client.ObjectKey, cond func(*skyhookv1.PackageSet) bool) *skyhookv1.PackageSet {
	t.Helper()
	ps := &skyhookv1.PackageSet{}
	// The patch helper writes conditions before the rest of the status:
	// wait for the generation too, so the whole status is there.
	eventually(t, "the PackageSet "+key.Name, func() bool {
		return k8sClient(t).Get(context.Background(), key, ps) == nil && cond(ps) && ps.Status.ObservedGeneration == ps.Generation
	})
	return ps
}

// A PackageSet applies the Skyhooks and DeploymentPolicies of its source's
// artifact, follows new revisions, applies nothing of a revision with an
// invalid manifest (and says why), prunes what a revision drops, and with
// prune takes its objects along when deleted.
func TestPackageSetAppliesAllOrNothingAndPrunes(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	src := newSource(t, "fleet", "fleet-repo")
	src.publish("main@sha1:1111", map[string]string{
		"sets/gpu.yaml":    skyhookManifest("ps-gpu", "1.0.0") + "---\n" + policyManifest,
		"sets/README.md":   "not a manifest",
		"elsewhere/x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ignored}\n",
	})
	ps := &skyhookv1.PackageSet{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: "fleet"},
		Spec: skyhookv1.PackageSetSpec{
			SourceRef: skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet-repo"},
			Path:      "sets", Interval: metav1.Duration{Duration: time.Hour}, RetryInterval: &metav1.Duration{Duration: time.Second},
			Prune: true, Wait: true, Timeout: &metav1.Duration{Duration: 30 * time.Second},
		},
	}
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(ps)
	got := waitPackageSet(t, key, func(p *skyhookv1.PackageSet) bool {
		return conditions.IsReady(p) && p.Status.LastAppliedRevision == "main@sha1:1111"
	})
	if got.Status.Inventory == nil || len(got.Status.Inventory.Entries) != 2 || got.Status.ObservedGeneration != got.Generation {
		t.Errorf("status %+v; want two objects in the inventory and the generation observed", got.Status)
	}
	sk := &skyhookv1.Skyhook{}
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-gpu"}, sk); err != nil || sk.Spec.Packages["tuning"].Version != "1.0.0" {
		t.Fatalf("the Skyhook: %v %+v", err, sk.Spec.Packages)
	}

	src.publish("main@sha1:2222", map[string]string{"sets/gpu.yaml": skyhookManifest("ps-gpu", "1.1.0") + "---\n" + policyManifest})
	waitPackageSet(t, key, func(p *skyhookv1.PackageSet) bool {
		return p.Status.LastAppliedRevision == "main@sha1:2222" && conditions.IsReady(p)
	})
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-gpu"}, sk); err != nil || sk.Spec.Packages["tuning"].Version != "1.1.0" {
		t.Fatalf("the new revision was not applied: %v %+v", err, sk.Spec.Packages)
	}

	src.publish("main@sha1:3333", map[string]string{
		"sets/gpu.yaml":    skyhookManifest("ps-gpu", "1.2.0"),
		"sets/broken.yaml": skyhookManifest("ps-broken", "not-a-version"),
		"sets/sneaky.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sneaky, namespace: fleet}\n",
	})
	got = waitPackageSet(t, key, func(p *skyhookv1.PackageSet) bool {
		return p.Status.LastAttemptedRevision == "main@sha1:3333" && conditions.IsStalled(p)
	})
	msg := conditions.GetMessage(got, meta.ReadyCondition)
	for _, want := range []string{"revision main@sha1:3333 was not applied", "revision main@sha1:2222 stays", `sneaky.yaml: document 1: ConfigMap "sneaky" (v1) is not allowed`} {
		if !strings.Contains(msg, want) {
			t.Errorf("Ready says %q; want %q", msg, want)
		}
	}
	if got.Status.LastAppliedRevision != "main@sha1:2222" {
		t.Errorf("last applied %s, want the last good revision", got.Status.LastAppliedRevision)
	}

	src.publish("main@sha1:4444", map[string]string{
		"sets/gpu.yaml":    skyhookManifest("ps-gpu", "1.2.0"),
		"sets/broken.yaml": skyhookManifest("ps-broken", "not-a-version"),
	})
	got = waitPackageSet(t, key, func(p *skyhookv1.PackageSet) bool {
		return p.Status.LastAttemptedRevision == "main@sha1:4444" && conditions.IsStalled(p)
	})
	if msg := conditions.GetMessage(got, meta.ReadyCondition); !strings.Contains(msg, "broken.yaml: Skyhook/ps-broken: spec.packages.tuning.version: Invalid value: \"not-a-version\": must be a semantic version") {
		t.Errorf("the admission refusal is not named by file, object and field: %q", msg)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-gpu"}, sk); err != nil || sk.Spec.Packages["tuning"].Version != "1.1.0" {
		t.Errorf("part of a refused revision was applied: %+v", sk.Spec.Packages)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-broken"}, &skyhookv1.Skyhook{}); !apierrors.IsNotFound(err) {
		t.Errorf("the invalid Skyhook exists: %v", err)
	}
	testenv.WaitWarning(t, env, "gpu", "ValidationFailed", "main@sha1:4444")

	src.publish("main@sha1:5555", map[string]string{"sets/gpu.yaml": skyhookManifest("ps-gpu", "1.2.0")})
	waitPackageSet(t, key, func(p *skyhookv1.PackageSet) bool {
		return p.Status.LastAppliedRevision == "main@sha1:5555" && conditions.IsReady(p)
	})
	eventually(t, "the dropped DeploymentPolicy to be pruned", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: "ps-policy"}, &skyhookv1.DeploymentPolicy{}))
	})

	// Flux interop from the command line: kubectl wait, and the fluxcd
	// category listing both kinds.
	if out, err := env.Kubectl("wait", "--for=condition=Ready", "--timeout=30s", "-n", "fleet", "packageset/gpu"); err != nil {
		t.Errorf("kubectl wait on the PackageSet: %v\n%s", err, out)
	}
	if out, err := env.Kubectl("wait", "--for=condition=Ready", "--timeout=30s", "skyhooks/ps-gpu"); err != nil {
		t.Errorf("kubectl wait on the Skyhook: %v\n%s", err, out)
	}
	out, err := env.Kubectl("get", "fluxcd", "-A")
	if err != nil || !strings.Contains(out, "packageset.skyhook.nvidia.com/gpu") || !strings.Contains(out, "skyhook.skyhook.nvidia.com/ps-gpu") {
		t.Errorf("kubectl get fluxcd -A: %v\n%s", err, out)
	}

	if err := c.Delete(ctx, ps); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the PackageSet's Skyhook to go with it", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: "ps-gpu"}, &skyhookv1.Skyhook{}))
	})
}
