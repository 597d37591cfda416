package release_test

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"helm.sh/helm/v3/pkg/chart"

	"github.com/skyhook-go/skyhook/config/release"
)

// The chart pushed to a registry (go-containerregistry's, on loopback) is
// where `helm install oci://<registry>/charts/skyhook-operator --version`
// looks, with Helm's media types: the config is Chart.yaml's metadata as
// JSON, the one layer is the .tgz itself.
func TestChartPushedAsHelmStoresIt(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	dir := assemble(t, release.Options{Version: "v1.2.3"})
	tgz := read(t, filepath.Join(dir, "skyhook-operator-1.2.3.tgz"))
	host := strings.TrimPrefix(srv.URL, "http://")

	ref, digest, err := release.PushChart(context.Background(), host+"/skyhook", tgz)
	if err != nil {
		t.Fatal(err)
	}
	if want := host + "/skyhook/charts/skyhook-operator:1.2.3"; ref.String() != want {
		t.Errorf("pushed to %s, want %s", ref, want)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := img.Digest(); got != digest {
		t.Errorf("digest %s in the registry, %s reported", got, digest)
	}
	manifest, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if manifest.MediaType != types.OCIManifestSchema1 || manifest.Config.MediaType != release.HelmConfigMediaType ||
		len(manifest.Layers) != 1 || manifest.Layers[0].MediaType != release.HelmChartMediaType {
		t.Fatalf("manifest %s, config %s, layers %v", manifest.MediaType, manifest.Config.MediaType, manifest.Layers)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if layer, err := io.ReadAll(rc); err != nil || string(layer) != string(tgz) {
		t.Errorf("the layer is not the .tgz (%d bytes, %d; %v)", len(layer), len(tgz), err)
	}
	config, err := img.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	var meta chart.Metadata
	if err := json.Unmarshal(config, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Name != "skyhook-operator" || meta.Version != "1.2.3" || meta.AppVersion != "v1.2.3" || meta.APIVersion != "v2" {
		t.Errorf("config: name %q, version %q, appVersion %q, apiVersion %q", meta.Name, meta.Version, meta.AppVersion, meta.APIVersion)
	}
}

// A file that is not a chart is refused before anything is pushed.
func TestPushRefusesANonChart(t *testing.T) {
	license, err := os.ReadFile(filepath.Join("..", "..", "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := release.PushChart(context.Background(), "127.0.0.1:1/skyhook", license); err == nil || !strings.Contains(err.Error(), "chart") {
		t.Errorf("error %v, want one about the chart", err)
	}
}
