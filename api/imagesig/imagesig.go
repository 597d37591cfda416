// Package imagesig signs OCI artifacts (package images, package sets,
// release images) and finds and verifies their signatures as cosign v3
// stores them by default (cosign's specs/BUNDLE_SPEC.md): a Sigstore
// bundle (v0.3) whose DSSE envelope carries an in-toto statement naming
// the artifact's digest, attached to that digest as an OCI referrer. An
// image signature is the statement of predicate type SignPredicateType
// with an empty predicate, so `cosign verify --key cosign.pub` reads what
// Sign writes, and this package reads what cosign writes.
//
// The cryptography is sigstore-go's (sign.Bundle, verify.Verifier); this
// package only places the bundles in the registry and reads them back.
package imagesig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"
)

// The media and predicate types of cosign's bundle format.
const (
	// BundleMediaType is a Sigstore bundle's, and the artifactType of the
	// manifest that attaches one.
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// SignPredicateType is the predicate type of an image signature. A
	// bundle of another predicate type (an SBOM, provenance) signed by the
	// same key is an attestation about the image, not a signature of it.
	SignPredicateType = "https://sigstore.dev/cosign/sign/v1"
	// InTotoPayloadType is the DSSE payload type of an in-toto statement.
	InTotoPayloadType = "application/vnd.in-toto+json"
	// emptyMediaType is the OCI empty descriptor's, the config of a bundle's manifest.
	emptyMediaType = "application/vnd.oci.empty.v1+json"
	// maxReferrers and maxBundleBytes bound what one lookup reads from a
	// registry, so that an artifact with a flood of referrers costs
	// admission a bounded time.
	maxReferrers   = 32
	maxBundleBytes = 1 << 20
)

// Statement is the in-toto statement (v1) about the artifact of digest d.
func Statement(d v1.Hash, predicateType string, predicate any) ([]byte, error) {
	if predicate == nil {
		predicate = map[string]any{}
	}
	return json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"digest": map[string]string{d.Algorithm: d.Hex}}},
		"predicateType": predicateType,
		"predicate":     predicate,
	})
}

// Sign signs the artifact at subject (a repository@digest) with keypair and
// attaches the signature to it. opts reach the registry (credentials,
// transport, context).
func Sign(subject name.Digest, keypair sign.Keypair, opts ...remote.Option) error {
	return Attest(subject, keypair, SignPredicateType, nil, opts...)
}

// Attest attaches to subject a bundle signing the statement of
// predicateType and predicate about it.
func Attest(subject name.Digest, keypair sign.Keypair, predicateType string, predicate any, opts ...remote.Option) error {
	desc, err := remote.Head(subject, opts...)
	if err != nil {
		return fmt.Errorf("reading %s: %w", subject, err)
	}
	statement, err := Statement(desc.Digest, predicateType, predicate)
	if err != nil {
		return err
	}
	pb, err := sign.Bundle(&sign.DSSEData{Data: statement, PayloadType: InTotoPayloadType}, keypair, sign.BundleOptions{})
	if err != nil {
		return fmt.Errorf("signing %s: %w", subject, err)
	}
	raw, err := protojson.Marshal(pb)
	if err != nil {
		return err
	}
	return attach(subject, *desc, raw, predicateType, opts)
}

// AttachBundle attaches a bundle (JSON) made elsewhere to subject, as a
// signature of predicateType.
func AttachBundle(subject name.Digest, bundleJSON []byte, predicateType string, opts ...remote.Option) error {
	desc, err := remote.Head(subject, opts...)
	if err != nil {
		return fmt.Errorf("reading %s: %w", subject, err)
	}
	return attach(subject, *desc, bundleJSON, predicateType, opts)
}

// attach uploads the bundle and the manifest that refers it to subject.
// go-containerregistry's Put also keeps the referrers tag (sha256-<hex>)
// of a registry without the referrers API.
func attach(subject name.Digest, desc v1.Descriptor, bundleJSON []byte, predicateType string, opts []remote.Option) error {
	layer := static.NewLayer(bundleJSON, types.MediaType(BundleMediaType))
	config := static.NewLayer([]byte("{}"), types.MediaType(emptyMediaType))
	repo := subject.Context()
	for _, l := range []v1.Layer{config, layer} {
		if err := remote.WriteLayer(repo, l, opts...); err != nil {
			return fmt.Errorf("uploading a signature of %s: %w", subject, err)
		}
	}
	layerDesc, err := descriptorOf(layer)
	if err != nil {
		return err
	}
	layerDesc.Annotations = map[string]string{"org.opencontainers.image.title": layerDesc.Digest.Algorithm + "-" + layerDesc.Digest.Hex + ".sigstore.json"}
	configDesc, err := descriptorOf(config)
	if err != nil {
		return err
	}
	manifest := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  BundleMediaType,
		Config:        *configDesc,
		Layers:        []v1.Descriptor{*layerDesc},
		Subject:       &v1.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size},
		Annotations: map[string]string{
			"dev.sigstore.bundle.content":       "dsse-envelope",
			"dev.sigstore.bundle.predicateType": predicateType,
		},
	}
	raw, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if err := remote.Put(repo.Digest(h.String()), rawManifest(raw), opts...); err != nil {
		return fmt.Errorf("attaching a signature to %s: %w", subject, err)
	}
	return nil
}

func descriptorOf(l v1.Layer) (*v1.Descriptor, error) {
	d, err := l.Digest()
	if err != nil {
		return nil, err
	}
	size, err := l.Size()
	if err != nil {
		return nil, err
	}
	mt, err := l.MediaType()
	if err != nil {
		return nil, err
	}
	return &v1.Descriptor{MediaType: mt, Digest: d, Size: size}, nil
}

// rawManifest is a manifest as bytes, for remote.Put.
type rawManifest []byte

func (m rawManifest) RawManifest() ([]byte, error)        { return m, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

// Bundles reads the Sigstore bundles attached to subject. A referrer that
// is not a readable bundle is skipped and said in skipped; when every
// candidate was skipped, the error is ErrUnsigned with their reasons, so
// that a refusal tells "no signature" from "signatures that do not parse".
func Bundles(subject name.Digest, opts ...remote.Option) (found []*bundle.Bundle, skipped []string, err error) {
	// No artifactType filter: some registries (go-containerregistry's own)
	// list a referrer under its config's media type, the empty one for a
	// bundle, so the filter would hide it; readBundle checks the layer.
	index, err := remote.Referrers(subject, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("listing the signatures of %s: %w", subject, err)
	}
	im, err := index.IndexManifest()
	if err != nil {
		return nil, nil, err
	}
	for i, d := range im.Manifests {
		if i == maxReferrers {
			skipped = append(skipped, fmt.Sprintf("%d referrers past the first %d", len(im.Manifests)-maxReferrers, maxReferrers))
			break
		}
		if d.ArtifactType != BundleMediaType && d.ArtifactType != emptyMediaType {
			continue // an SBOM, a signature in another format
		}
		b, err := readBundle(subject.Context().Digest(d.Digest.String()), opts)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", d.Digest, err))
			continue
		}
		found = append(found, b)
	}
	if len(found) == 0 && len(skipped) > 0 {
		return nil, skipped, fmt.Errorf("%w (unreadable: %s)", ErrUnsigned, strings.Join(skipped, "; "))
	}
	return found, skipped, nil
}

// readBundle reads the bundle of the manifest at ref.
func readBundle(ref name.Digest, opts []remote.Option) (*bundle.Bundle, error) {
	img, err := remote.Image(ref, opts...)
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	if len(layers) != 1 {
		return nil, fmt.Errorf("a bundle manifest holds one layer, this one %d", len(layers))
	}
	if mt, err := layers[0].MediaType(); err != nil || mt != BundleMediaType {
		return nil, fmt.Errorf("its layer is %q, not a Sigstore bundle", mt)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	raw, err := io.ReadAll(io.LimitReader(rc, maxBundleBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxBundleBytes {
		return nil, fmt.Errorf("bundle larger than %d bytes", maxBundleBytes)
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("not a Sigstore bundle: %w", err)
	}
	return &b, nil
}

// Resolve is the digest subject's tag or digest points at now.
func Resolve(ref name.Reference, opts ...remote.Option) (name.Digest, error) {
	if d, ok := ref.(name.Digest); ok {
		return d, nil
	}
	desc, err := remote.Head(ref, opts...)
	if err != nil {
		return name.Digest{}, err
	}
	return ref.Context().Digest(desc.Digest.String()), nil
}
