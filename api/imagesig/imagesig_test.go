package imagesig_test

import (
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/sign"

	"github.com/skyhook-go/skyhook/api/imagesig"
)

// pushed pushes a random image to a registry of its own (with or without
// the referrers API) and returns its reference by digest.
func pushed(t *testing.T, referrersAPI bool) name.Digest {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(referrersAPI), registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/pkg/tuning:1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return ref.Context().Digest(d.String())
}

func keypair(t *testing.T) (*sign.EphemeralKeypair, *imagesig.Authority) {
	t.Helper()
	kp, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := kp.GetPublicKeyPem()
	if err != nil {
		t.Fatal(err)
	}
	a, err := imagesig.KeyAuthority("ops", pem)
	if err != nil {
		t.Fatal(err)
	}
	return kp, a
}

func verify(t *testing.T, d name.Digest, authorities ...*imagesig.Authority) error {
	t.Helper()
	bundles, skipped, err := imagesig.Bundles(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) > 0 {
		t.Fatalf("skipped bundles: %v", skipped)
	}
	h, err := v1.NewHash(d.DigestStr())
	if err != nil {
		t.Fatal(err)
	}
	_, err = imagesig.VerifyAny(bundles, h, authorities, imagesig.SignPredicateType)
	return err
}

func TestSignatureVerifiesWithItsKeyOnly(t *testing.T) {
	for _, referrersAPI := range []bool{true, false} {
		d := pushed(t, referrersAPI)
		kp, trusted := keypair(t)
		_, other := keypair(t)
		if err := verify(t, d, trusted); !errors.Is(err, imagesig.ErrUnsigned) {
			t.Fatalf("referrers API %v: unsigned image: got %v, want ErrUnsigned", referrersAPI, err)
		}
		if err := imagesig.Sign(d, kp); err != nil {
			t.Fatal(err)
		}
		if err := verify(t, d, trusted); err != nil {
			t.Fatalf("referrers API %v: signed with the trusted key: %v", referrersAPI, err)
		}
		if err := verify(t, d, other); !errors.Is(err, imagesig.ErrNotTrusted) {
			t.Fatalf("referrers API %v: another key: got %v, want ErrNotTrusted", referrersAPI, err)
		}
		if err := verify(t, d, other, trusted); err != nil {
			t.Fatalf("referrers API %v: any one authority is enough: %v", referrersAPI, err)
		}
	}
}

func TestSignatureOfAnotherDigestDoesNotVerify(t *testing.T) {
	d := pushed(t, true)
	kp, trusted := keypair(t)
	if err := imagesig.Sign(d, kp); err != nil {
		t.Fatal(err)
	}
	bundles, _, err := imagesig.Bundles(d)
	if err != nil || len(bundles) != 1 {
		t.Fatalf("bundles: %d, %v", len(bundles), err)
	}
	other, err := v1.NewHash("sha256:" + strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := imagesig.VerifyAny(bundles, other, []*imagesig.Authority{trusted}, imagesig.SignPredicateType); !errors.Is(err, imagesig.ErrNotTrusted) {
		t.Fatalf("a signature checked against another digest: got %v, want ErrNotTrusted", err)
	}
}

func TestAttestationIsNotASignature(t *testing.T) {
	d := pushed(t, true)
	kp, trusted := keypair(t)
	if err := imagesig.Attest(d, kp, "https://cyclonedx.org/bom", map[string]any{"bomFormat": "CycloneDX"}); err != nil {
		t.Fatal(err)
	}
	err := verify(t, d, trusted)
	if !errors.Is(err, imagesig.ErrNotTrusted) || !strings.Contains(err.Error(), "attestation of type https://cyclonedx.org/bom") {
		t.Fatalf("an SBOM attestation by the trusted key: got %v, want a refusal naming its type", err)
	}
}

func TestKeyAuthorityRefusesWhatIsNotAKey(t *testing.T) {
	for _, in := range []string{"", "not pem", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"} {
		if _, err := imagesig.KeyAuthority("x", in); err == nil {
			t.Errorf("KeyAuthority(%q): no error", in)
		}
	}
	if _, err := imagesig.KeylessAuthority("x", []byte(`{}`), imagesig.Identity{Issuer: "i", Subject: "s"}); err == nil {
		t.Error("KeylessAuthority with an empty trusted root: no error")
	}
}

// A key pair in cosign's format signs what its public key verifies; the
// wrong password, and a key of another kind, are refused.
func TestCosignFormatKeyPairSignsAndVerifies(t *testing.T) {
	private, public, err := imagesig.GenerateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(private), "ENCRYPTED SIGSTORE PRIVATE KEY") {
		t.Fatalf("private key not in cosign's format:\n%s", private)
	}
	if _, err := imagesig.LoadPrivateKey(private, []byte("wrong")); err == nil || !strings.Contains(err.Error(), "password") {
		t.Fatalf("the wrong password: %v", err)
	}
	key, err := imagesig.LoadPrivateKey(private, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	trusted, err := imagesig.KeyAuthority("release", string(public))
	if err != nil {
		t.Fatal(err)
	}
	d := pushed(t, false)
	if err := imagesig.Sign(d, key); err != nil {
		t.Fatal(err)
	}
	if err := verify(t, d, trusted); err != nil {
		t.Fatalf("signed with the loaded key, verified with its public key: %v", err)
	}
	if _, err := imagesig.LoadPrivateKey(public, nil); err == nil {
		t.Error("a public key was loaded as a private key")
	}
}

// A referrer that claims to be a bundle and does not parse is no
// signature: the refusal says it was unreadable.
func TestUnreadableBundleIsNoSignature(t *testing.T) {
	d := pushed(t, true)
	if err := imagesig.AttachBundle(d, []byte("not a bundle"), imagesig.SignPredicateType); err != nil {
		t.Fatal(err)
	}
	found, skipped, err := imagesig.Bundles(d)
	if !errors.Is(err, imagesig.ErrUnsigned) || !strings.Contains(err.Error(), "unreadable") || len(found) != 0 || len(skipped) != 1 {
		t.Fatalf("Bundles: %d found, skipped %v, error %v; want ErrUnsigned naming the unreadable bundle", len(found), skipped, err)
	}
}
