package imagesig_test

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/skyhook-go/skyhook/api/imagesig"
)

// A keyless signature verifies against the trusted root given as JSON (as
// an admin copies trusted_root.json into a policy) for the identity it was
// issued to, and for no other.
func TestKeylessSignatureVerifiesForItsIdentity(t *testing.T) {
	sigstore, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	// A private certificate authority's root, without certificate
	// transparency logs: the test CA embeds no SCTs.
	trustedRoot := trustedRootJSON(t, sigstore, false)
	d, err := v1.NewHash("sha256:" + strings.Repeat("5e", 32))
	if err != nil {
		t.Fatal(err)
	}
	statement, err := imagesig.Statement(d, imagesig.SignPredicateType, nil)
	if err != nil {
		t.Fatal(err)
	}
	const issuer, subject = "https://token.actions.example", "https://github.example/org/packages/.github/workflows/release.yml@refs/heads/main"
	entity, err := sigstore.Attest(subject, issuer, statement)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		id   imagesig.Identity
		ok   bool
	}{
		{"exact identity", imagesig.Identity{Issuer: issuer, Subject: subject}, true},
		{"subject by expression", imagesig.Identity{Issuer: issuer, SubjectRegExp: `^https://github\.example/org/packages/`}, true},
		{"another subject", imagesig.Identity{Issuer: issuer, Subject: "someone@example.com"}, false},
		{"another issuer", imagesig.Identity{Issuer: "https://accounts.example", Subject: subject}, false},
	}
	for _, tc := range cases {
		a, err := imagesig.KeylessAuthority("ci", trustedRoot, tc.id)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err = a.Verify(entity, d, imagesig.SignPredicateType)
		if (err == nil) != tc.ok {
			t.Errorf("%s: verify = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	a, err := imagesig.KeylessAuthority("ci", trustedRoot, imagesig.Identity{Issuer: issuer, Subject: subject})
	if err != nil {
		t.Fatal(err)
	}
	other, err := v1.NewHash("sha256:" + strings.Repeat("00", 32))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Verify(entity, other, imagesig.SignPredicateType); err == nil {
		t.Error("a keyless signature verified for another digest")
	}

	// A root of another Sigstore does not vouch for this certificate.
	stranger, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	b, err := imagesig.KeylessAuthority("ci", trustedRootJSON(t, stranger, false), imagesig.Identity{Issuer: issuer, Subject: subject})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Verify(entity, d, imagesig.SignPredicateType); err == nil {
		t.Error("a certificate of another certificate authority verified")
	}

	// A root that lists certificate transparency logs wants the
	// certificate's SCT from one, as cosign verify does.
	withCT, err := imagesig.KeylessAuthority("ci", trustedRootJSON(t, sigstore, true), imagesig.Identity{Issuer: issuer, Subject: subject})
	if err != nil {
		t.Fatal(err)
	}
	if err := withCT.Verify(entity, d, imagesig.SignPredicateType); err == nil || !strings.Contains(err.Error(), "certificate timestamp") {
		t.Errorf("a certificate without an SCT under a root with CT logs: %v, want a refusal naming the SCT", err)
	}
}

// trustedRootJSON is the virtual Sigstore's trusted root, as JSON.
func trustedRootJSON(t *testing.T, s *ca.VirtualSigstore, ctLogs bool) []byte {
	t.Helper()
	var logs map[string]*root.TransparencyLog
	if ctLogs {
		logs = s.CTLogs()
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, s.FulcioCertificateAuthorities(), logs, s.TimestampingAuthorities(), s.RekorLogs())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
