package images

import (
	"archive/tar"
	"io"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var (
	amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 = v1.Platform{OS: "linux", Architecture: "arm64"}
	spec  = Spec{Name: "skyhook-operator", User: NonRoot, Version: "1.2.3", Revision: "abc123"}
)

func fakeBinaries() []Binary {
	return []Binary{
		{Platform: amd64, Data: []byte("\x7fELF not really amd64")},
		{Platform: arm64, Data: []byte("\x7fELF not really arm64")},
	}
}

// The index is OCI, lists one image per platform with the platform on its
// descriptor, and each image runs its binary as the entrypoint, as the
// user asked, with the OCI labels.
func TestIndex(t *testing.T) {
	idx, err := Index(spec, fakeBinaries())
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := idx.MediaType(); mt != types.OCIImageIndex {
		t.Errorf("index media type %s", mt)
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest.Manifests) != 2 {
		t.Fatalf("%d manifests, want 2", len(manifest.Manifests))
	}
	for i, desc := range manifest.Manifests {
		want := fakeBinaries()[i]
		if desc.Platform == nil || desc.Platform.String() != want.Platform.String() || desc.MediaType != types.OCIManifestSchema1 {
			t.Errorf("manifest %d: platform %v, media type %s", i, desc.Platform, desc.MediaType)
		}
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkImage(t, img, want)
	}
}

func checkImage(t *testing.T, img v1.Image, want Binary) {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Config.Entrypoint, " ") != "/skyhook-operator" || cfg.Config.User != NonRoot ||
		cfg.OS != want.Platform.OS || cfg.Architecture != want.Platform.Architecture || !cfg.Created.Equal(epoch) {
		t.Errorf("config: %+v, os %s, arch %s, created %s", cfg.Config, cfg.OS, cfg.Architecture, cfg.Created)
	}
	wantLabels := map[string]string{
		LabelTitle: "skyhook-operator", LabelVersion: "1.2.3", LabelRevision: "abc123", LabelSource: Source,
		LabelLicenses: "Apache-2.0", LabelCreated: "1970-01-01T00:00:00Z",
	}
	for k, v := range wantLabels {
		if cfg.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, cfg.Config.Labels[k], v)
		}
	}
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s", mt)
	}
	if m, _ := img.Manifest(); m.Config.MediaType != types.OCIConfigJSON {
		t.Errorf("config media type %s", m.Config.MediaType)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v", len(layers), err)
	}
	if mt, _ := layers[0].MediaType(); mt != types.OCILayer {
		t.Errorf("layer media type %s", mt)
	}
	files := tar.NewReader(mutate.Extract(img))
	hdr, err := files.Next()
	if err != nil {
		t.Fatal(err)
	}
	content, _ := io.ReadAll(files)
	if hdr.Name != "skyhook-operator" || hdr.Mode != 0o755 || hdr.Uid != 0 || hdr.Gid != 0 || !hdr.ModTime.Equal(epoch) || string(content) != string(want.Data) {
		t.Errorf("the layer holds %s mode %o uid %d gid %d mtime %s (%d bytes)", hdr.Name, hdr.Mode, hdr.Uid, hdr.Gid, hdr.ModTime, len(content))
	}
	if _, err := files.Next(); err != io.EOF {
		t.Errorf("more than one file in the layer: %v", err)
	}
}

// The same binaries give the same digest, a changed binary another; the
// agent's spec (no user) runs as root.
func TestDigestFollowsTheBinaries(t *testing.T) {
	digest := func(s Spec, b []Binary) v1.Hash {
		t.Helper()
		idx, err := Index(s, b)
		if err != nil {
			t.Fatal(err)
		}
		d, err := idx.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := digest(spec, fakeBinaries())
	if again := digest(spec, fakeBinaries()); again != first {
		t.Errorf("two builds of the same binaries: %s and %s", first, again)
	}
	changed := fakeBinaries()
	changed[1].Data = append(changed[1].Data, '!')
	if other := digest(spec, changed); other == first {
		t.Errorf("a changed binary kept the digest %s", first)
	}

	agent := Spec{Name: "skyhook-agent", Version: "1.2.3"}
	img, err := Image(agent, fakeBinaries()[0])
	if err != nil {
		t.Fatal(err)
	}
	if cfg, _ := img.ConfigFile(); cfg.Config.User != "" || cfg.Config.Entrypoint[0] != "/skyhook-agent" || cfg.Config.Labels[LabelRevision] != "" {
		t.Errorf("agent image config: %+v", cfg.Config)
	}
	if _, err := Index(spec, []Binary{{Platform: amd64}}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty binary: %v", err)
	}
}

func TestComponentsNamed(t *testing.T) {
	got, err := ComponentsNamed("agent, operator")
	if err != nil || len(got) != 2 || got[0].Image != "skyhook-agent" || got[1].User != NonRoot {
		t.Fatalf("%+v, %v", got, err)
	}
	if _, err := ComponentsNamed("operator,webhook"); err == nil || !strings.Contains(err.Error(), `"webhook"`) {
		t.Errorf("an unknown image: %v", err)
	}
	ref, err := got[1].Ref("registry.example:5000/team", "v1.0.0")
	if err != nil || ref.String() != "registry.example:5000/team/skyhook-operator:v1.0.0" {
		t.Errorf("ref %s, %v", ref, err)
	}
}
