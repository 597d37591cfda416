package release

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/CycloneDX/cyclonedx-gomod/pkg/generate/bin"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/openvex/go-vex/pkg/vex"
	"github.com/sigstore/sigstore-go/pkg/sign"

	"github.com/skyhook-go/skyhook/api/imagesig"
)

// The predicate types of what a release attaches, as cosign names them
// (`cosign verify-attestation --type slsaprovenance1|cyclonedx|openvex`).
const (
	ProvenancePredicateType = "https://slsa.dev/provenance/v1"
	SBOMPredicateType       = "https://cyclonedx.org/bom"
	VEXPredicateType        = vex.TypeURI
)

// BuildType is the SLSA build type of a release: `make release`, as
// docs/release.md describes it.
const BuildType = Homepage + "/blob/main/docs/release.md"

// Attestation says what a release signs with and what it tells about the
// build.
type Attestation struct {
	// Key signs every signature and attestation.
	Key sign.Keypair
	// Version, Tag, Registry and Revision are the release's (the git
	// commit for the provenance's source).
	Version, Tag, Registry, Revision string
	// BuilderID names who ran the build (a CI's workflow URI); default
	// BuildType.
	BuilderID string
	// VEX holds the release manager's statements about known
	// vulnerabilities; nil attaches a document with none.
	VEX *vex.VEX
	// Remote reaches the registry.
	Remote []remote.Option
}

// SignImage signs the image index pushed at ref, attaches its SLSA v1
// provenance to it, and to each platform manifest a CycloneDX SBOM of the
// platform's binary (from the Go module graph its build info records) and
// an OpenVEX document.
func SignImage(ref name.Digest, idx v1.ImageIndex, a Attestation) error {
	if err := imagesig.Sign(ref, a.Key, a.Remote...); err != nil {
		return err
	}
	if err := imagesig.Attest(ref, a.Key, ProvenancePredicateType, a.provenance(), a.Remote...); err != nil {
		return fmt.Errorf("provenance of %s: %w", ref, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range im.Manifests {
		platform := ref.Context().Digest(d.Digest.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		bom, err := SBOM(img)
		if err != nil {
			return fmt.Errorf("SBOM of %s: %w", platform, err)
		}
		if err := imagesig.Attest(platform, a.Key, SBOMPredicateType, bom, a.Remote...); err != nil {
			return fmt.Errorf("SBOM of %s: %w", platform, err)
		}
		if err := imagesig.Attest(platform, a.Key, VEXPredicateType, a.vex(platform), a.Remote...); err != nil {
			return fmt.Errorf("VEX of %s: %w", platform, err)
		}
	}
	return nil
}

// SignChart signs the chart pushed at ref.
func SignChart(ref name.Digest, a Attestation) error {
	return imagesig.Sign(ref, a.Key, a.Remote...)
}

// provenance is the SLSA v1 predicate of the release's build.
func (a Attestation) provenance() map[string]any {
	builder := a.BuilderID
	if builder == "" {
		builder = BuildType
	}
	return map[string]any{
		"buildDefinition": map[string]any{
			"buildType":          BuildType,
			"externalParameters": map[string]any{"version": a.Version, "tag": a.Tag, "registry": a.Registry},
			"resolvedDependencies": []any{map[string]any{
				"uri": "git+" + Homepage, "digest": map[string]string{"gitCommit": a.Revision},
			}},
		},
		"runDetails": map[string]any{"builder": map[string]any{"id": builder}},
	}
}

// vex is the OpenVEX document for the platform image: the release
// manager's statements, about this image.
func (a Attestation) vex(platform name.Digest) vex.VEX {
	doc := vex.New()
	if a.VEX != nil {
		doc = *a.VEX
	}
	doc.ID = "https://openvex.dev/docs/public/" + platform.Context().RepositoryStr() + "@" + platform.DigestStr()
	doc.Author = Homepage
	doc.Version = 1
	return doc
}

// SBOM is the CycloneDX SBOM of the Go binary an image holds, made by
// cyclonedx-gomod from the module graph the binary's build info records.
func SBOM(img v1.Image) (json.RawMessage, error) {
	binary, err := onlyFile(img)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "skyhook-sbom-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "binary")
	if err := os.WriteFile(path, binary, 0o600); err != nil {
		return nil, err
	}
	gen, err := bin.NewGenerator(path, bin.WithIncludeStdlib(true))
	if err != nil {
		return nil, err
	}
	bom, err := gen.Generate()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON).Encode(bom); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// onlyFile is the one regular file of the image: the images a release
// builds hold their binary and nothing else (config/images).
func onlyFile(img v1.Image) ([]byte, error) {
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	var found []byte
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("the image holds more than one file (%s)", hdr.Name)
		}
		if found, err = io.ReadAll(tr); err != nil {
			return nil, err
		}
	}
	if found == nil {
		return nil, errors.New("the image holds no file")
	}
	return found, nil
}
