package image

import (
	"archive/tar"
	"io"
	"log"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var fakeBinary = []byte("\x7fELF not really an agent")

// The image runs the agent as its entrypoint, holds it at /skyhook-agent,
// executable and owned by root, is linux/amd64 in OCI media types, and the
// same binary always gives the same digest.
func TestBuild(t *testing.T) {
	img, err := Build(fakeBinary, Options{Version: "1.2.3", Source: "https://example/skyhook"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Config.Entrypoint, " ") != BinaryPath || cfg.OS != "linux" || cfg.Architecture != "amd64" ||
		cfg.Config.Labels["org.opencontainers.image.version"] != "1.2.3" {
		t.Errorf("config: %+v, os %s, arch %s", cfg.Config, cfg.OS, cfg.Architecture)
	}
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s", mt)
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
	if hdr.Name != "skyhook-agent" || hdr.Mode != 0o755 || hdr.Uid != 0 || string(content) != string(fakeBinary) {
		t.Errorf("the layer holds %s mode %o uid %d (%d bytes)", hdr.Name, hdr.Mode, hdr.Uid, len(content))
	}
	if _, err := files.Next(); err != io.EOF {
		t.Errorf("more than one file in the layer: %v", err)
	}

	again, err := Build(fakeBinary, Options{Version: "1.2.3", Source: "https://example/skyhook"})
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of one binary: %s and %s", d1, d2)
	}
	if _, err := Build(nil, Options{}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty binary: %v", err)
	}
}

// The image survives the ways it travels: a tarball (docker load, crane
// push) and a registry (go-containerregistry's, in process).
func TestImageTravels(t *testing.T) {
	img, err := Build(fakeBinary, Options{Version: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	ref, err := name.NewTag(strings.TrimPrefix(srv.URL, "http://")+"/skyhook/agent:dev", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "agent.tar")
	if err := tarball.WriteToFile(file, ref, img); err != nil {
		t.Fatal(err)
	}
	loaded, err := tarball.ImageFromPath(file, &ref)
	if err != nil {
		t.Fatal(err)
	}
	// A docker-format tarball has docker media types, so its manifest
	// digest differs; the layer and the entrypoint are what must survive.
	wantLayers, _ := img.Layers()
	wantLayer, _ := wantLayers[0].Digest()
	gotLayers, err := loaded.Layers()
	if err != nil || len(gotLayers) != 1 {
		t.Fatalf("layers from the tarball: %v", err)
	}
	gotCfg, err := loaded.ConfigFile()
	if gotLayer, _ := gotLayers[0].Digest(); err != nil || gotLayer != wantLayer || gotCfg.Config.Entrypoint[0] != BinaryPath {
		t.Errorf("from the tarball: layer %s (want %s), config %v", gotLayer, wantLayer, err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pulled.ConfigFile()
	if got, _ := pulled.Digest(); err != nil || got != want || cfg.Config.Entrypoint[0] != BinaryPath {
		t.Errorf("pulled back: %s (%v), want %s", got, err, want)
	}
}
