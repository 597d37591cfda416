package e2e

import (
	"context"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/imagesig"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// skyhook push --sign-key → an OCIRepository with Flux's own spec.verify
// (cosign, the public key in a Secret) in the real source-controller takes
// the signed set and the PackageSet rolls it out; an unsigned set is
// refused from the start, and a tag moved to a tampered, unsigned set
// changes nothing on the cluster.
func TestSignedOCIArtifactIsVerifiedBySourceController(t *testing.T) {
	ctx := context.Background()
	c := k8sClient(t)
	namespace(t, "signed")
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	skyhook := filepath.Join(t.TempDir(), "skyhook")
	if err := testenv.BuildCLI(skyhook); err != nil {
		t.Fatal(err)
	}
	private, public, err := imagesig.GenerateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "cosign.key")
	if err := os.WriteFile(keyFile, private, 0o600); err != nil {
		t.Fatal(err)
	}
	push := func(tag, version string, sign bool) {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "gpu.yaml"), []byte(skyhookYAML("e2e-signed", version)), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"push", dir, "oci://" + host + "/fleet/gpu:" + tag, "--insecure"}
		if sign {
			args = append(args, "--sign-key", keyFile)
		}
		cmd := exec.Command(skyhook, args...)
		cmd.Env = append(os.Environ(), "COSIGN_PASSWORD=pw")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("skyhook %v: %v\n%s", args, err, out)
		}
	}
	push("v1", "3.0.0", true)
	push("unsigned", "3.0.1", false)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cosign-pub", Namespace: "signed"},
		Data: map[string][]byte{"cosign.pub": public}}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	repository := func(name, tag string) *sourcev1.OCIRepository {
		repo := &sourcev1.OCIRepository{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "signed"},
			Spec: sourcev1.OCIRepositorySpec{URL: "oci://" + host + "/fleet/gpu", Insecure: true,
				Interval: metav1.Duration{Duration: 2 * time.Second}, Reference: &sourcev1.OCIRepositoryRef{Tag: tag},
				Verify: &sourcev1.OCIRepositoryVerification{Provider: "cosign", SecretRef: &meta.LocalObjectReference{Name: "cosign-pub"}}},
		}
		if err := c.Create(ctx, repo); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), repo) })
		return repo
	}
	signed := repository("gpu", "v1")
	unsigned := repository("unsigned", "unsigned")
	packageSetAt(t, "signed", "gpu", ".", skyhookv1.SourceReference{Kind: sourcev1.OCIRepositoryKind, Name: "gpu"})
	testenv.Eventually(t, "the signed set to roll out", 2*time.Minute, func() bool {
		v, ready := skyhookVersion(t, "e2e-signed")
		return v == "3.0.0" && ready
	})
	if !verified(t, signed) {
		t.Errorf("the signed artifact's OCIRepository does not say SourceVerified")
	}
	testenv.Eventually(t, "source-controller to refuse the unsigned set", time.Minute, func() bool {
		return refusedVerification(t, unsigned)
	})

	// The signed tag moves to a tampered set nobody signed.
	push("v1", "6.6.6", false)
	testenv.Eventually(t, "source-controller to refuse the tampered set", time.Minute, func() bool {
		return refusedVerification(t, signed)
	})
	if v, _ := skyhookVersion(t, "e2e-signed"); v != "3.0.0" {
		t.Errorf("the tampered set was applied: version %s", v)
	}
}

// verified reports whether source-controller verified the repository's
// artifact.
func verified(t *testing.T, repo *sourcev1.OCIRepository) bool {
	got := &sourcev1.OCIRepository{}
	if err := k8sClient(t).Get(context.Background(), client.ObjectKeyFromObject(repo), got); err != nil {
		return false
	}
	return conditions.IsTrue(got, sourcev1.SourceVerifiedCondition)
}

// refusedVerification reports whether source-controller says the
// repository's latest artifact failed verification.
func refusedVerification(t *testing.T, repo *sourcev1.OCIRepository) bool {
	got := &sourcev1.OCIRepository{}
	if err := k8sClient(t).Get(context.Background(), client.ObjectKeyFromObject(repo), got); err != nil {
		return false
	}
	msg := conditions.GetMessage(got, sourcev1.SourceVerifiedCondition)
	if conditions.IsFalse(got, sourcev1.SourceVerifiedCondition) && strings.Contains(msg, "verif") {
		t.Logf("%s: SourceVerified False: %s", repo.Name, msg)
		return true
	}
	return false
}
