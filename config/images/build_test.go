package images

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

const testVersion, testRevision = "1.2.3-test", "0123456789abcdef0123456789abcdef01234567"

var (
	buildOnce sync.Once
	built     map[string]v1.ImageIndex
	buildErr  error
)

// buildAll compiles both images for both platforms once per test binary:
// four static builds, most of whose packages go build's cache holds after
// the first run (-trimpath builds share it).
func buildAll(t *testing.T) map[string]v1.ImageIndex {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the operator and the agent for two platforms")
	}
	buildOnce.Do(func() {
		built = map[string]v1.ImageIndex{}
		o := BuildOptions{Version: testVersion, Revision: testRevision, Platforms: []v1.Platform{amd64, arm64}, Log: os.Stderr}
		for _, c := range Components {
			if built[c.Name], buildErr = Build(context.Background(), c, o); buildErr != nil {
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// What `make push` does, against a registry on loopback: both images for
// both platforms pushed, then pulled back and checked: the platforms, the
// binary's architecture in each layer, the amd64 binary's --version, the
// labels and the user.
func TestPushedImagesPullBack(t *testing.T) {
	indexes := buildAll(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	for _, c := range Components {
		t.Run(c.Name, func(t *testing.T) {
			ref, err := c.Ref(strings.TrimPrefix(srv.URL, "http://")+"/skyhook-go", testVersion)
			if err != nil {
				t.Fatal(err)
			}
			if err := Push(context.Background(), ref, indexes[c.Name]); err != nil {
				t.Fatal(err)
			}
			pulled, err := remote.Index(ref)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := indexes[c.Name].Digest()
			if got, _ := pulled.Digest(); got != want {
				t.Errorf("pulled %s, pushed %s", got, want)
			}
			checkPulled(t, c, pulled)
		})
	}
}

// elfMachines are the ELF machines of the platforms the images have.
var elfMachines = map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}

// wantUsers: the operator runs as nonroot; the agent as root, for the
// privileged stage pods.
var wantUsers = map[string]string{"operator": "65532:65532", "agent": ""}

func checkPulled(t *testing.T, c Component, idx v1.ImageIndex) {
	manifest, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, desc := range manifest.Manifests {
		platform := desc.Platform.String()
		platforms = append(platforms, platform)
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		binary := onlyFile(t, img)
		f, err := elf.NewFile(bytes.NewReader(binary))
		if err != nil {
			t.Fatalf("%s: not an ELF binary: %v", platform, err)
		}
		if f.Machine != elfMachines[platform] {
			t.Errorf("%s: the binary is for %s", platform, f.Machine)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if l := cfg.Config.Labels; l[LabelVersion] != testVersion || l[LabelRevision] != testRevision {
			t.Errorf("%s: labels %v", platform, l)
		}
		if want := wantUsers[c.Name]; cfg.Config.User != want {
			t.Errorf("%s: user %q, want %q", platform, cfg.Config.User, want)
		}
		if platform == "linux/amd64" {
			checkVersion(t, c, binary)
		}
	}
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v", platforms)
	}
}

// checkVersion runs the binary (this machine is amd64) with --version.
func checkVersion(t *testing.T, c Component, binary []byte) {
	path := filepath.Join(t.TempDir(), c.Image)
	if err := os.WriteFile(path, binary, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "--version").CombinedOutput()
	if want := c.Image + " " + testVersion + "\n"; err != nil || string(out) != want {
		t.Errorf("%s --version: %q, %v; want %q", c.Image, out, err, want)
	}
}

func onlyFile(t *testing.T, img v1.Image) []byte {
	t.Helper()
	files := tar.NewReader(mutate.Extract(img))
	if _, err := files.Next(); err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(files)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The OCI image layout holds the index under its tag, with the same digest.
func TestLayout(t *testing.T) {
	idx := buildAll(t)["agent"]
	ref, err := Components[1].Ref("ghcr.io/skyhook-go", testVersion)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "skyhook-agent")
	if err := WriteLayout(dir, ref, idx); err != nil {
		t.Fatal(err)
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := top.IndexManifest()
	if err != nil || len(manifest.Manifests) != 1 {
		t.Fatalf("index.json: %+v, %v", manifest, err)
	}
	want, _ := idx.Digest()
	if got := manifest.Manifests[0]; got.Digest != want || got.Annotations[refName] != testVersion {
		t.Errorf("index.json names %s as %q; want %s as %q", got.Digest, got.Annotations[refName], want, testVersion)
	}
}
