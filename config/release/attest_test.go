package release_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/bundle"

	"github.com/skyhook-go/skyhook/api/imagesig"
	"github.com/skyhook-go/skyhook/config/images"
	"github.com/skyhook-go/skyhook/config/release"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// agentIndex is an image index as `make images` builds it, of the agent
// (the smallest of the binaries) built once for this machine, labelled for
// two platforms: the SBOM is read from a real Go binary's build info.
func agentIndex(t *testing.T) v1.ImageIndex {
	t.Helper()
	out := filepath.Join(t.TempDir(), "skyhook-agent")
	if err := testenv.Build(out, "./cmd/skyhook-agent", "-trimpath"); err != nil {
		t.Fatal(err)
	}
	binary, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := images.Index(images.Spec{Name: "skyhook-agent", Version: "v1.2.3", Revision: "feedface"}, []images.Binary{
		{Platform: v1.Platform{OS: "linux", Architecture: "amd64"}, Data: binary},
		{Platform: v1.Platform{OS: "linux", Architecture: "arm64"}, Data: binary},
	})
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// verifyAs is what docs/release.md has a user run with cosign, done with
// sigstore-go: `cosign verify --key` (the signature) and `cosign
// verify-attestation --key --type <type>`; it returns the verified
// statement's predicate.
func verifyAs(t *testing.T, ref name.Digest, key *imagesig.Authority, predicateType string) (map[string]any, error) {
	t.Helper()
	bundles, _, err := imagesig.Bundles(ref)
	if err != nil {
		return nil, err
	}
	h, err := v1.NewHash(ref.DigestStr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := imagesig.VerifyAny(bundles, h, []*imagesig.Authority{key}, predicateType); err != nil {
		return nil, err
	}
	for _, b := range bundles {
		if key.Verify(b, h, predicateType) == nil {
			return predicateOf(t, b), nil
		}
	}
	return nil, errors.New("verified, then not found")
}

// predicateOf is the predicate of the in-toto statement the bundle signs.
func predicateOf(t *testing.T, b *bundle.Bundle) map[string]any {
	t.Helper()
	env, err := b.Envelope()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := env.Statement()
	if err != nil {
		t.Fatal(err)
	}
	out, err := raw.GetPredicate().MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A release pushed to a registry carries, verifiable with its public key:
// a signature and SLSA provenance on each image index, a CycloneDX SBOM of
// the binary and an OpenVEX document on each platform manifest, and a
// signature on the chart. An index whose layer was swapped is not signed.
func TestReleaseIsSignedWithProvenanceSBOMAndVEX(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	private, public, err := imagesig.GenerateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := imagesig.LoadPrivateKey(private, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	trusted, err := imagesig.KeyAuthority("release", string(public))
	if err != nil {
		t.Fatal(err)
	}
	idx := agentIndex(t)
	tag, err := name.NewTag(host + "/skyhook/skyhook-agent:v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	ref := tag.Context().Digest(d.String())
	a := release.Attestation{Key: key, Version: "v1.2.3", Tag: "v1.2.3", Registry: host + "/skyhook", Revision: "feedface"}
	if err := release.SignImage(ref, idx, a); err != nil {
		t.Fatal(err)
	}

	if _, err := verifyAs(t, ref, trusted, imagesig.SignPredicateType); err != nil {
		t.Errorf("cosign verify of the index: %v", err)
	}
	provenance, err := verifyAs(t, ref, trusted, release.ProvenancePredicateType)
	if err != nil {
		t.Fatalf("cosign verify-attestation --type slsaprovenance1 of the index: %v", err)
	}
	if got, _ := json.Marshal(provenance); !strings.Contains(string(got), `"gitCommit":"feedface"`) || !strings.Contains(string(got), `"buildType":"`+release.BuildType) {
		t.Errorf("provenance %s: want the revision and the build type", got)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range im.Manifests {
		platform := ref.Context().Digest(m.Digest.String())
		sbom, err := verifyAs(t, platform, trusted, release.SBOMPredicateType)
		if err != nil {
			t.Fatalf("cosign verify-attestation --type cyclonedx of %s: %v", m.Platform, err)
		}
		components, _ := json.Marshal(sbom["components"])
		if sbom["bomFormat"] != "CycloneDX" || !strings.Contains(string(components), "pkg:golang/") {
			t.Errorf("SBOM of %s: %.300s; want CycloneDX with the Go modules", m.Platform, components)
		}
		vexDoc, err := verifyAs(t, platform, trusted, release.VEXPredicateType)
		if err != nil {
			t.Fatalf("cosign verify-attestation --type openvex of %s: %v", m.Platform, err)
		}
		if ctx, _ := vexDoc["@context"].(string); !strings.HasPrefix(ctx, "https://openvex.dev/ns") || !strings.Contains(vexDoc["@id"].(string), m.Digest.Hex) {
			t.Errorf("VEX of %s: %v", m.Platform, vexDoc)
		}
	}

	// The chart, pushed and signed.
	dir := assemble(t, release.Options{Version: "v1.2.3"})
	chartRef, chartDigest, err := release.PushChart(context.Background(), host+"/skyhook", read(t, filepath.Join(dir, "skyhook-operator-1.2.3.tgz")))
	if err != nil {
		t.Fatal(err)
	}
	chart := chartRef.Context().Digest(chartDigest.String())
	if err := release.SignChart(chart, a); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyAs(t, chart, trusted, imagesig.SignPredicateType); err != nil {
		t.Errorf("cosign verify of the chart: %v", err)
	}

	// A layer swapped in the amd64 image and the index pushed again under
	// the release's tag: the tag's digest carries no signature.
	amd64, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	layer, err := random.Layer(1024, "application/vnd.oci.image.layer.v1.tar")
	if err != nil {
		t.Fatal(err)
	}
	tampered, err := mutate.AppendLayers(amd64, layer)
	if err != nil {
		t.Fatal(err)
	}
	tamperedIdx := mutate.AppendManifests(mutate.RemoveManifests(idx, func(desc v1.Descriptor) bool { return desc.Digest == im.Manifests[0].Digest }),
		mutate.IndexAddendum{Add: tampered, Descriptor: v1.Descriptor{Platform: im.Manifests[0].Platform}})
	if err := remote.WriteIndex(tag, tamperedIdx); err != nil {
		t.Fatal(err)
	}
	now, err := imagesig.Resolve(tag)
	if err != nil {
		t.Fatal(err)
	}
	if now.DigestStr() == ref.DigestStr() {
		t.Fatal("the tampered index has the signed digest")
	}
	if _, err := verifyAs(t, now, trusted, imagesig.SignPredicateType); !errors.Is(err, imagesig.ErrUnsigned) {
		t.Errorf("cosign verify of the tag after a layer was swapped: %v, want no signature", err)
	}
}
