package webhook_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/sigstore/sigstore-go/pkg/sign"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/imagesig"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/test/testenv"
	"github.com/skyhook-go/skyhook/webhook/webhooktest"
)

// trustPullSecret is the operator's pull secret in these tests: admission
// reads the registry's credentials from it.
const trustPullSecret = "trust-registry"

// trustRegistry is a registry behind basic auth, with the operator's pull
// secret for it, a signing key and its public key, and a count of the
// requests it served.
type trustRegistry struct {
	*nodeimages.Registry
	requests *atomic.Int64
	key      *sign.EphemeralKeypair
	pub      string
}

var (
	sharedTrustRegistry     *trustRegistry
	sharedTrustRegistryOnce sync.Once
)

// trustSetup starts the registry once for the package and makes sure the
// operator's pull secret holds its credentials.
func trustSetup(t *testing.T) *trustRegistry {
	t.Helper()
	sharedTrustRegistryOnce.Do(func() {
		requests := &atomic.Int64{}
		reg, err := nodeimages.StartRegistry(nodeimages.RegistryOptions{Username: "trust", Password: "s3cret", Log: webhooktest.Lines{N: requests}})
		if err != nil {
			panic(err)
		}
		key, err := sign.NewEphemeralKeypair(nil)
		if err != nil {
			panic(err)
		}
		pub, err := key.GetPublicKeyPem()
		if err != nil {
			panic(err)
		}
		sharedTrustRegistry = &trustRegistry{Registry: reg, requests: requests, key: key, pub: pub}
	})
	r := sharedTrustRegistry
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: trustPullSecret, Namespace: operatorNamespace},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: nodeimages.DockerConfigJSON(r.Host(), "trust", "s3cret")},
	}
	if err := k8sClient(t).Create(context.Background(), secret); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	return r
}

// push pushes a new random image as repo:tag and returns its digest
// reference.
func (r *trustRegistry) push(t *testing.T, repoAndTag string) name.Digest {
	t.Helper()
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := r.Push(context.Background(), repoAndTag, img)
	if err != nil {
		t.Fatal(err)
	}
	d, err := name.NewDigest(ref)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// sign signs d with the key, or with another when key is nil.
func (r *trustRegistry) sign(t *testing.T, d name.Digest, key sign.Keypair) {
	t.Helper()
	if key == nil {
		key = r.key
	}
	if err := imagesig.Sign(d, key, r.RemoteOptions(context.Background())...); err != nil {
		t.Fatal(err)
	}
}

// policy creates an ImageTrustPolicy over the images under repoPrefix
// trusting the registry's key.
func (r *trustRegistry) policy(t *testing.T, policyName, repoPrefix string, mode skyhookv1.TrustMode) {
	t.Helper()
	p := &skyhookv1.ImageTrustPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName},
		Spec: skyhookv1.ImageTrustPolicySpec{
			Images:      []string{r.Host() + "/" + repoPrefix + "/*"},
			Mode:        mode,
			Authorities: []skyhookv1.TrustAuthority{{Name: "release-key", Key: &skyhookv1.KeyAuthority{PublicKey: r.pub}}},
		},
	}
	c := k8sClient(t)
	if err := c.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), p) })
	// The operator's cache sees the policy once a Skyhook under it is refused.
	waitRefusedUnsigned(t, r, repoPrefix)
}

// waitRefusedUnsigned waits until an unsigned image under the prefix is
// refused, which says the operator's cache has the policy.
func waitRefusedUnsigned(t *testing.T, r *trustRegistry, repoPrefix string) {
	t.Helper()
	d := r.push(t, repoPrefix+"/probe:1.0.0")
	obj := skyhookOf(t, "probe-"+strings.ReplaceAll(repoPrefix, "/", "-"), d.Context().Name(), "1.0.0", "")
	eventually(t, func() error {
		err := k8sClient(t).Create(context.Background(), obj, client.DryRunAll)
		if err == nil {
			return fmt.Errorf("an unsigned image under %s admitted; the policy is not in force yet", repoPrefix)
		}
		return nil
	})
}

// skyhookOf is a Skyhook of one package "tuning".
func skyhookOf(t *testing.T, name, image, version, containerSHA string) *skyhookv1.Skyhook {
	t.Helper()
	return &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{
			"tuning": {PackageRef: skyhookv1.PackageRef{Version: version}, Image: image, ContainerSHA: containerSHA},
		}},
	}
}

// Verify, then pin: a signed image is admitted with the digest that was
// verified in containerSHA; a tag moved afterwards changes nothing, and a
// re-apply of the same manifest costs no registry request.
func TestSignedPackageImageIsPinnedAndStaysPinned(t *testing.T) {
	r := trustSetup(t)
	r.policy(t, "pin", "pin", skyhookv1.TrustEnforce)
	signed := r.push(t, "pin/tuning:1.0.0")
	r.sign(t, signed, nil)
	c := k8sClient(t)
	ctx := context.Background()
	sk := skyhookOf(t, "trust-pinned", signed.Context().Name(), "1.0.0", "")
	if err := c.Create(ctx, sk); err != nil {
		t.Fatalf("a signed image was refused: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	if got := sk.Spec.Packages["tuning"].ContainerSHA; got != signed.DigestStr() {
		t.Fatalf("containerSHA %q, want the verified digest %s", got, signed.DigestStr())
	}

	// A NodeWright is verified and pinned the same way.
	nw := decode(t, fmt.Sprintf(`
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata: {name: trust-pinned}
spec:
  packages:
    tuning: {version: 1.0.0, image: %q}
`, signed.Context().Name()))
	pinnedNW := nw.DeepCopy()
	if err := c.Create(ctx, pinnedNW, client.DryRunAll); err != nil {
		t.Fatalf("a NodeWright of a signed image: %v", err)
	}
	if got, _, _ := unstructured.NestedString(pinnedNW.Object, "spec", "packages", "tuning", "containerSHA"); got != signed.DigestStr() {
		t.Errorf("NodeWright's containerSHA %q, want %s", got, signed.DigestStr())
	}

	// The tag moves to an unsigned image; a re-apply without containerSHA
	// (as kubectl replace or a GitOps tool writes the manifest) keeps the
	// verified digest and asks the registry nothing.
	moved := r.push(t, "pin/tuning:1.0.0")
	before := r.requests.Load()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var live skyhookv1.Skyhook
		if err := c.Get(ctx, client.ObjectKeyFromObject(sk), &live); err != nil {
			return err
		}
		pkg := live.Spec.Packages["tuning"]
		pkg.ContainerSHA = ""
		live.Spec.Packages["tuning"] = pkg
		return c.Update(ctx, &live)
	})
	if err != nil {
		t.Fatalf("re-applying the admitted Skyhook: %v", err)
	}
	var live skyhookv1.Skyhook
	if err := c.Get(ctx, client.ObjectKeyFromObject(sk), &live); err != nil {
		t.Fatal(err)
	}
	if got := live.Spec.Packages["tuning"].ContainerSHA; got != signed.DigestStr() {
		t.Fatalf("after the tag moved to %s, containerSHA %q, want the verified %s", moved.DigestStr(), got, signed.DigestStr())
	}
	if n := r.requests.Load() - before; n != 0 {
		t.Errorf("the re-apply made %d registry requests, want 0", n)
	}
	// A new NodeWright of the moved tag resolves it afresh: unsigned, refused.
	if err := c.Create(ctx, nw.DeepCopy(), client.DryRunAll); err == nil || !strings.Contains(err.Error(), "no signature is attached") {
		t.Errorf("a NodeWright of the moved tag: %v, want a refusal", err)
	}

	// A second Skyhook naming the same signed digest is verified from the
	// kept result: no registry request either.
	before = r.requests.Load()
	again := skyhookOf(t, "trust-pinned-again", signed.Context().Name(), "1.0.0", signed.DigestStr())
	if err := c.Create(ctx, again, client.DryRunAll); err != nil {
		t.Fatalf("the same signed digest, named explicitly: %v", err)
	}
	if n := r.requests.Load() - before; n != 0 {
		t.Errorf("verifying a digest verified before made %d registry requests, want 0", n)
	}
}

// Each way an image can fail to be trusted is refused, naming the package,
// the image and the reason.
func TestUntrustedPackageImagesAreRefused(t *testing.T) {
	r := trustSetup(t)
	r.policy(t, "refuse", "refuse", skyhookv1.TrustEnforce)
	other, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := r.RemoteOptions(context.Background())

	unsigned := r.push(t, "refuse/unsigned:1.0.0")
	wrongKey := r.push(t, "refuse/wrong-key:1.0.0")
	r.sign(t, wrongKey, other)
	sbomOnly := r.push(t, "refuse/sbom-only:1.0.0")
	if err := imagesig.Attest(sbomOnly, r.key, "https://cyclonedx.org/bom", map[string]any{"bomFormat": "CycloneDX"}, opts...); err != nil {
		t.Fatal(err)
	}
	// A signature of another image, attached to this one.
	signedElsewhere := r.push(t, "refuse/elsewhere:1.0.0")
	donor := r.push(t, "refuse/donor:1.0.0")
	r.sign(t, donor, nil)
	unsignedBeside := r.push(t, "refuse/donor:unsigned") // the signed tag's repository
	bundles, _, err := imagesig.Bundles(donor, opts...)
	if err != nil || len(bundles) != 1 {
		t.Fatalf("the donor's bundles: %d, %v", len(bundles), err)
	}
	raw, err := bundles[0].MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := imagesig.AttachBundle(signedElsewhere, raw, imagesig.SignPredicateType, opts...); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, image, version, containerSHA, reason string
	}{
		{"unsigned", unsigned.Context().Name(), "1.0.0", "", "no signature is attached"},
		{"another key", wrongKey.Context().Name(), "1.0.0", "", "no signature verifies"},
		{"an SBOM attestation only", sbomOnly.Context().Name(), "1.0.0", "", "attestation of type https://cyclonedx.org/bom"},
		{"a signature of another digest", signedElsewhere.Context().Name(), "1.0.0", "", "no signature verifies"},
		{"an explicit unsigned digest beside a signed tag", donor.Context().Name(), "1.0.0", unsignedBeside.DigestStr(), "no signature is attached"},
		{"a tag that does not exist", unsigned.Context().Name(), "9.9.9", "", "resolving the tag"},
	}
	c := k8sClient(t)
	for _, tc := range cases {
		sk := skyhookOf(t, "trust-refused", tc.image, tc.version, tc.containerSHA)
		err := c.Create(context.Background(), sk, client.DryRunAll)
		if err == nil {
			t.Errorf("%s: admitted", tc.name)
			continue
		}
		for _, want := range []string{"spec.packages.tuning.image", tc.image, "ImageTrustPolicy refuse", tc.reason} {
			if tc.reason == "resolving the tag" && want == "ImageTrustPolicy refuse" {
				continue // no digest to name a policy's verdict on
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: refusal %q does not say %q", tc.name, err, want)
			}
		}
	}
}

// An update that only moves the version to an unsigned tag is refused,
// even though the stored containerSHA (of the signed version) comes along
// with it, as kubectl apply sends it.
func TestVersionBumpToAnUnsignedImageIsRefused(t *testing.T) {
	r := trustSetup(t)
	r.policy(t, "bump", "bump", skyhookv1.TrustEnforce)
	signed := r.push(t, "bump/tuning:1.0.0")
	r.sign(t, signed, nil)
	r.push(t, "bump/tuning:1.0.1")
	c := k8sClient(t)
	ctx := context.Background()
	sk := skyhookOf(t, "trust-bump", signed.Context().Name(), "1.0.0", "")
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var live skyhookv1.Skyhook
		if err := c.Get(ctx, client.ObjectKeyFromObject(sk), &live); err != nil {
			return err
		}
		pkg := live.Spec.Packages["tuning"]
		pkg.Version = "1.0.1" // containerSHA stays the signed 1.0.0's
		live.Spec.Packages["tuning"] = pkg
		return c.Update(ctx, &live)
	})
	if err == nil || !strings.Contains(err.Error(), "no signature is attached") || !strings.Contains(err.Error(), "1.0.1") {
		t.Fatalf("bumping to an unsigned version: %v, want a refusal naming 1.0.1 and the missing signature", err)
	}
}

// Audit admits an untrusted image with a warning and an event, and pins
// nothing; the registry down is a refusal that says so.
func TestAuditWarnsAndRegistryDownRefuses(t *testing.T) {
	r := trustSetup(t)
	c, warnings := testenv.WarningClient(t, env)
	ctx := context.Background()
	audit := &skyhookv1.ImageTrustPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "audit"},
		Spec: skyhookv1.ImageTrustPolicySpec{Images: []string{r.Host() + "/audit/*"}, Mode: skyhookv1.TrustAudit,
			Authorities: []skyhookv1.TrustAuthority{{Name: "release-key", Key: &skyhookv1.KeyAuthority{PublicKey: r.pub}}}},
	}
	if err := c.Create(ctx, audit); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, audit) })
	unsigned := r.push(t, "audit/tuning:1.0.0")
	sk := skyhookOf(t, "trust-audited", unsigned.Context().Name(), "1.0.0", "")
	eventually(t, func() error {
		if err := c.Create(ctx, sk, client.DryRunAll); err != nil {
			return err
		}
		for _, w := range warnings() {
			if strings.Contains(w, "(Audit)") && strings.Contains(w, "no signature is attached") {
				return nil
			}
		}
		return fmt.Errorf("no audit warning yet: %q", warnings())
	})
	if err := c.Create(ctx, sk); err != nil {
		t.Fatalf("Audit refused: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	if got := sk.Spec.Packages["tuning"].ContainerSHA; got != "" {
		t.Errorf("an unverified image was pinned to %q", got)
	}
	testenv.WaitWarning(t, env, "trust-audited", "UntrustedImage", "no signature is attached")

	// A policy over a registry nobody serves.
	down := &skyhookv1.ImageTrustPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "down"},
		Spec: skyhookv1.ImageTrustPolicySpec{Images: []string{"127.0.0.1:1/down/*"},
			Authorities: []skyhookv1.TrustAuthority{{Name: "release-key", Key: &skyhookv1.KeyAuthority{PublicKey: r.pub}}}},
	}
	if err := c.Create(ctx, down); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, down) })
	unreachable := skyhookOf(t, "trust-down", "127.0.0.1:1/down/tuning", "1.0.0", "")
	eventually(t, func() error {
		err := c.Create(ctx, unreachable, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "cannot be verified") || !strings.Contains(err.Error(), "connection refused") {
			return fmt.Errorf("registry down: %v, want a refusal saying it cannot be reached", err)
		}
		return nil
	})
}

// An ImageTrustPolicy admission could not verify with is refused, naming
// the field.
func TestImageTrustPolicyThatCannotVerifyIsRefused(t *testing.T) {
	c := k8sClient(t)
	bad := &skyhookv1.ImageTrustPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Spec: skyhookv1.ImageTrustPolicySpec{Images: []string{"ghcr.io/org/[*"},
			Authorities: []skyhookv1.TrustAuthority{
				{Name: "k", Key: &skyhookv1.KeyAuthority{PublicKey: "not a key"}},
				{Name: "k", Keyless: &skyhookv1.KeylessAuthority{Issuer: "https://issuer", Subject: "me", TrustedRoot: "{}"}},
			}},
	}
	err := c.Create(context.Background(), bad, client.DryRunAll)
	if err == nil {
		t.Fatal("a policy with a bad pattern, key and trusted root was admitted")
	}
	for _, want := range []string{"spec.images[0]", "spec.authorities[0].key.publicKey", "spec.authorities[1].name", "spec.authorities[1].keyless"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %s", err, want)
		}
	}
	both := bad.DeepCopy()
	both.Spec.Images = []string{"ghcr.io/*"}
	both.Spec.Authorities = []skyhookv1.TrustAuthority{{Name: "k"}}
	if err := c.Create(context.Background(), both, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "exactly one of key and keyless") {
		t.Errorf("an authority with neither key nor keyless: %v", err)
	}
}

// eventually retries check for up to 30 s and fails with its last error.
func eventually(t *testing.T, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		last = check()
		return last == nil, nil
	})
	if err != nil {
		t.Fatal(last)
	}
}
