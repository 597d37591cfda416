package imagesig

import (
	"crypto"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Authority is a signer whose signatures are trusted: a public key, or a
// keyless identity under a trusted root.
type Authority struct {
	// Name is how refusals name the authority.
	Name     string
	verifier *verify.Verifier
	identity verify.PolicyOption
}

// KeyAuthority trusts the signatures of the PEM public key. They need no
// transparency log or timestamp (`cosign sign --tlog-upload=false`), as a
// cluster that is offline verifies them.
func KeyAuthority(name, publicKeyPEM string) (*Authority, error) {
	key, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(publicKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("not a PEM public key: %w", err)
	}
	sv, err := loadVerifier(key)
	if err != nil {
		return nil, err
	}
	material := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		// One key per authority: the bundle's key hint is not needed to
		// pick it, and cosign leaves the hint empty.
		return root.NewExpiringKey(sv, time.Time{}, time.Time{}), nil
	})
	v, err := verify.NewVerifier(material, verify.WithNoObserverTimestamps())
	if err != nil {
		return nil, err
	}
	return &Authority{Name: name, verifier: v, identity: verify.WithKey()}, nil
}

// loadVerifier picks the signature scheme of the key, with the hash cosign
// signs with (SHA-256, as sigstore-go's default keypair does).
func loadVerifier(key crypto.PublicKey) (signature.Verifier, error) {
	sv, err := signature.LoadDefaultVerifier(key)
	if err != nil {
		return nil, fmt.Errorf("unsupported public key: %w", err)
	}
	return sv, nil
}

// Identity is the certificate identity a keyless authority accepts: each of
// issuer and subject exactly, or by a regular expression.
type Identity struct {
	Issuer, IssuerRegExp, Subject, SubjectRegExp string
}

// KeylessAuthority trusts the certificates of the trusted root's
// certificate authorities for the identity, on a signature that a
// transparency log or timestamp authority of the root saw while the
// certificate was valid, with a certificate transparency log's timestamp
// when the root lists such logs.
func KeylessAuthority(name string, trustedRootJSON []byte, id Identity) (*Authority, error) {
	tr, err := root.NewTrustedRootFromJSON(trustedRootJSON)
	if err != nil {
		return nil, fmt.Errorf("not a Sigstore trusted root: %w", err)
	}
	if len(tr.FulcioCertificateAuthorities()) == 0 {
		return nil, errors.New("the trusted root lists no certificate authority")
	}
	opts := []verify.VerifierOption{verify.WithObserverTimestamps(1)}
	if len(tr.CTLogs()) > 0 {
		opts = append(opts, verify.WithSignedCertificateTimestamps(1))
	}
	v, err := verify.NewVerifier(tr, opts...)
	if err != nil {
		return nil, err
	}
	certID, err := verify.NewShortCertificateIdentity(id.Issuer, id.IssuerRegExp, id.Subject, id.SubjectRegExp)
	if err != nil {
		return nil, err
	}
	return &Authority{Name: name, verifier: v, identity: verify.WithCertificateIdentity(certID)}, nil
}

// Verify checks that b (a bundle) is the authority's signature, of
// predicateType, over the artifact of digest d.
func (a *Authority) Verify(b verify.SignedEntity, d v1.Hash, predicateType string) error {
	digest, err := hex.DecodeString(d.Hex)
	if err != nil {
		return fmt.Errorf("digest %s: %w", d, err)
	}
	res, err := a.verifier.Verify(b, verify.NewPolicy(verify.WithArtifactDigest(d.Algorithm, digest), a.identity))
	if err != nil {
		return err
	}
	if res.Statement == nil {
		return errors.New("the bundle signs no in-toto statement")
	}
	if got := res.Statement.GetPredicateType(); got != predicateType {
		return fmt.Errorf("the bundle is an attestation of type %s, not a signature (%s)", got, predicateType)
	}
	return nil
}

// VerifyAny is the first authority one of the bundles verifies against for
// the artifact of digest d, or an error that says, for each bundle, why no
// authority took it.
func VerifyAny(bundles []*bundle.Bundle, d v1.Hash, authorities []*Authority, predicateType string) (*Authority, error) {
	if len(bundles) == 0 {
		return nil, ErrUnsigned
	}
	var reasons []string
	for i, b := range bundles {
		for _, a := range authorities {
			err := a.Verify(b, d, predicateType)
			if err == nil {
				return a, nil
			}
			reasons = append(reasons, fmt.Sprintf("signature %d, authority %s: %v", i+1, a.Name, err))
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNotTrusted, strings.Join(reasons, "; "))
}

// The reasons VerifyAny refuses.
var (
	// ErrUnsigned is an artifact with no signature attached.
	ErrUnsigned = errors.New("no signature is attached")
	// ErrNotTrusted is an artifact whose signatures no authority verifies.
	ErrNotTrusted = errors.New("no signature verifies")
)
