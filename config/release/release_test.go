package release_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/config/helm"
	"github.com/skyhook-go/skyhook/config/release"
)

var license = []byte("Apache License\nVersion 2.0\n")

// standIn is the CLI "built" for a platform: bytes that name the platform
// and the version, so a mix-up shows.
func standIn(_ context.Context, p release.Platform, version string) ([]byte, error) {
	return []byte("kubectl-skyhook " + version + " for " + p.String()), nil
}

// assemble makes a release with stand-in binaries into a new folder.
func assemble(t *testing.T, o release.Options) string {
	t.Helper()
	o.License, o.Build = license, standIn
	dir := t.TempDir()
	if _, err := release.Assemble(context.Background(), dir, o); err != nil {
		t.Fatal(err)
	}
	return dir
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// The chart is stamped: version without the v, appVersion as the images'
// tag; it loads with the Helm SDK and lints without an error or warning.
// Its files have fixed times and no owner, as the CLI archives' have.
func TestChartIsStampedAndLints(t *testing.T) {
	dir := assemble(t, release.Options{Version: "v1.2.3"})
	path := filepath.Join(dir, "skyhook-operator-1.2.3.tgz")
	ch, err := loader.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Metadata.Version != "1.2.3" || ch.Metadata.AppVersion != "v1.2.3" {
		t.Errorf("version %q, appVersion %q; want 1.2.3 and v1.2.3", ch.Metadata.Version, ch.Metadata.AppVersion)
	}
	untar(t, read(t, path))
	msgs, err := release.Lint(read(t, path))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Severity >= support.WarningSev {
			t.Errorf("lint: %s", m)
		}
	}
}

// Both install files run the operator and its stage pods' agent at the
// release's tag, from the registry given.
func TestInstallFilesUseTheReleaseImages(t *testing.T) {
	for _, c := range []struct{ registry, wantPrefix string }{
		{"", "ghcr.io/skyhook-go/"},
		{"registry.example.com/mirror", "registry.example.com/mirror/"},
	} {
		dir := assemble(t, release.Options{Version: "1.2.3-rc.1", Registry: c.registry})
		for _, file := range []string{release.InstallFile, release.InstallCertManagerFile} {
			d := deployment(t, read(t, filepath.Join(dir, file)))
			manager := d.Spec.Template.Spec.Containers[0]
			if want := c.wantPrefix + "skyhook-operator:1.2.3-rc.1"; manager.Image != want {
				t.Errorf("%s: image %s, want %s", file, manager.Image, want)
			}
			if want := "--agent-image=" + c.wantPrefix + "skyhook-agent:1.2.3-rc.1"; !slices.Contains(manager.Args, want) {
				t.Errorf("%s: args %v, want %s", file, manager.Args, want)
			}
		}
	}
}

// deployment is the one Deployment of a multi-document stream.
func deployment(t *testing.T, stream []byte) appsv1.Deployment {
	t.Helper()
	var found []appsv1.Deployment
	for _, doc := range strings.Split(string(stream), "\n---\n") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatal(err)
		}
		if d.Kind == "Deployment" {
			found = append(found, d)
		}
	}
	if len(found) != 1 || len(found[0].Spec.Template.Spec.Containers) == 0 {
		t.Fatalf("want one Deployment with a container, got %d", len(found))
	}
	return found[0]
}

// At the chart's own version and appVersion, the install files are the
// kustomize bases `make generate` wrote: the same values, the same objects.
func TestInstallFilesAreTheBases(t *testing.T) {
	ch, err := helm.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := assemble(t, release.Options{Version: ch.Metadata.Version, Tag: ch.Metadata.AppVersion})
	for file, base := range map[string]string{release.InstallFile: "default", release.InstallCertManagerFile: "certmanager"} {
		got := withoutComments(read(t, filepath.Join(dir, file)))
		want := withoutComments(read(t, filepath.Join("..", base, "skyhook-operator.yaml")))
		if got != want {
			t.Errorf("%s differs from config/%s/skyhook-operator.yaml", file, base)
		}
	}
}

// withoutComments drops the header comments before the first document.
func withoutComments(data []byte) string {
	s := string(data)
	return s[strings.Index(s, "---\n"):]
}

// Each archive holds exactly LICENSE and the binary built for its
// platform, executable, owned by root, at the epoch.
func TestArchivesHoldTheBinaryAndLicense(t *testing.T) {
	dir := assemble(t, release.Options{Version: "1.2.3"})
	for _, p := range release.Platforms {
		entries := untar(t, read(t, filepath.Join(dir, fmt.Sprintf("skyhook_1.2.3_%s_%s.tar.gz", p.OS, p.Arch))))
		bin, _ := standIn(context.Background(), p, "1.2.3")
		want := []entry{{"LICENSE", 0o644, string(license)}, {"kubectl-skyhook", 0o755, string(bin)}}
		if !slices.Equal(entries, want) {
			t.Errorf("%s: entries %v, want %v", p, entries, want)
		}
	}
}

type entry struct {
	name string
	mode int64
	data string
}

func (e entry) String() string { return fmt.Sprintf("%s %#o %q", e.name, e.mode, e.data) }

// untar lists a .tar.gz's entries, failing on a header that is not
// reproducible (a name or time in the gzip header, an owner, a time).
func untar(t *testing.T, data []byte) []entry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header: name %q, time %s", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	var out []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || h.ModTime.Unix() != 0 {
			t.Errorf("%s: owner %d:%d (%q:%q), time %s", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{h.Name, h.Mode, string(body)})
	}
}

// krewPlugin is what this test reads of a krew plugin manifest, by krew's
// field names.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
		} `json:"platforms"`
	} `json:"spec"`
}

// The krew manifest has one platform per archive, downloaded from the URL
// given and checked by the sha256 of the archive on disk.
func TestKrewManifestPointsAtTheArchives(t *testing.T) {
	const url = "https://downloads.example.com/skyhook/v1.2.3"
	dir := assemble(t, release.Options{Version: "1.2.3", DownloadURL: url + "/"})
	var plugin krewPlugin
	if err := yaml.UnmarshalStrict(read(t, filepath.Join(dir, "skyhook.yaml")), &plugin); err != nil {
		t.Fatal(err)
	}
	if plugin.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || plugin.Kind != "Plugin" || plugin.Metadata.Name != "skyhook" {
		t.Errorf("apiVersion %q, kind %q, name %q", plugin.APIVersion, plugin.Kind, plugin.Metadata.Name)
	}
	if plugin.Spec.Version != "v1.2.3" || plugin.Spec.Homepage == "" || plugin.Spec.ShortDescription == "" || plugin.Spec.Description == "" {
		t.Errorf("spec: version %q, homepage %q, shortDescription %q, description %q",
			plugin.Spec.Version, plugin.Spec.Homepage, plugin.Spec.ShortDescription, plugin.Spec.Description)
	}
	var platforms []string
	for _, p := range plugin.Spec.Platforms {
		labels := p.Selector.MatchLabels
		platforms = append(platforms, labels["os"]+"/"+labels["arch"])
		file := fmt.Sprintf("skyhook_1.2.3_%s_%s.tar.gz", labels["os"], labels["arch"])
		if p.URI != url+"/"+file {
			t.Errorf("%s: uri %s", file, p.URI)
		}
		if want := sha256Hex(read(t, filepath.Join(dir, file))); p.SHA256 != want {
			t.Errorf("%s: sha256 %s, the file's is %s", file, p.SHA256, want)
		}
		files := fmt.Sprint(p.Files)
		if p.Bin != "kubectl-skyhook" || files != "[{kubectl-skyhook .} {LICENSE .}]" {
			t.Errorf("%s: bin %q, files %s", file, p.Bin, files)
		}
	}
	if want := []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("platforms %v, want %v", platforms, want)
	}
}

// checksums.txt lists every other file of the release with its sha256, as
// sha256sum prints them.
func TestChecksumsListEveryFile(t *testing.T) {
	dir := assemble(t, release.Options{Version: "1.2.3"})
	listed := map[string]string{}
	scanner := bufio.NewScanner(bytes.NewReader(read(t, filepath.Join(dir, "checksums.txt"))))
	for scanner.Scan() {
		sum, name, ok := strings.Cut(scanner.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("not a sha256sum line: %q", scanner.Text())
		}
		listed[name] = sum
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name() == "checksums.txt" {
			continue
		}
		if want := sha256Hex(read(t, filepath.Join(dir, f.Name()))); listed[f.Name()] != want {
			t.Errorf("%s: listed %q, is %s", f.Name(), listed[f.Name()], want)
		}
		delete(listed, f.Name())
	}
	if len(listed) != 0 || len(files) != 9 {
		t.Errorf("%d files, listed but missing: %v", len(files), listed)
	}
}

// The same inputs give the same bytes: every file, the chart included.
func TestReleaseIsReproducible(t *testing.T) {
	first := assemble(t, release.Options{Version: "1.2.3"})
	second := assemble(t, release.Options{Version: "1.2.3"})
	files, err := os.ReadDir(first)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !bytes.Equal(read(t, filepath.Join(first, f.Name())), read(t, filepath.Join(second, f.Name()))) {
			t.Errorf("%s differs between two assemblies", f.Name())
		}
	}
}

// A VERSION that is not a release's is refused, naming VERSION, before
// anything is written.
func TestBadVersionIsRefused(t *testing.T) {
	for _, version := range []string{"", "c6b82a1", "1.2", "v1", "1.2.3.4", "1.2.3+build.5", "V1.2.3", "01.2.3"} {
		dir := t.TempDir()
		_, err := release.Assemble(context.Background(), dir, release.Options{Version: version, License: license, Build: standIn})
		if err == nil || !strings.Contains(err.Error(), "VERSION") {
			t.Errorf("VERSION %q: error %v, want one naming VERSION", version, err)
		}
		if files, _ := os.ReadDir(dir); len(files) != 0 {
			t.Errorf("VERSION %q: %d files written", version, len(files))
		}
	}
}

// An image tag or registry that no registry would take is refused, naming
// the variable.
func TestBadImageReferenceIsRefused(t *testing.T) {
	for _, o := range []release.Options{{Tag: "1.2.3 rc"}, {Registry: "Registry.Example.com:x/a b"}} {
		o.Version, o.License, o.Build = "1.2.3", license, standIn
		dir := t.TempDir()
		_, err := release.Assemble(context.Background(), dir, o)
		if err == nil || !strings.Contains(err.Error(), "IMAGE_TAG") {
			t.Errorf("tag %q, registry %q: error %v, want one naming IMAGE_REGISTRY and IMAGE_TAG", o.Tag, o.Registry, err)
		}
		if files, _ := os.ReadDir(dir); len(files) != 0 {
			t.Errorf("tag %q, registry %q: %d files written", o.Tag, o.Registry, len(files))
		}
	}
}

// A failed build stops the release, naming the platform.
func TestFailedBuildNamesThePlatform(t *testing.T) {
	failing := func(_ context.Context, p release.Platform, _ string) ([]byte, error) {
		if p.OS == "darwin" {
			return nil, fmt.Errorf("no toolchain")
		}
		return []byte("binary"), nil
	}
	_, err := release.Assemble(context.Background(), t.TempDir(), release.Options{Version: "1.2.3", License: license, Build: failing})
	if err == nil || !strings.Contains(err.Error(), "darwin/amd64") || !strings.Contains(err.Error(), "no toolchain") {
		t.Errorf("error %v, want one naming darwin/amd64 and the cause", err)
	}
}

// A release made for a mirror packages a chart whose default images are the
// mirror's, so `helm install` from the mirror needs no overrides; values.yaml
// keeps its comments. A release for the default registry packages the
// chart's values.yaml as it is.
func TestPackagedChartInstallsFromTheRegistry(t *testing.T) {
	source, err := os.ReadFile(filepath.Join("..", "helm", "skyhook-operator", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ registry, want string }{
		{"", "ghcr.io/skyhook-go/"},
		{"registry.example.com/mirror", "registry.example.com/mirror/"},
	} {
		dir := assemble(t, release.Options{Version: "1.2.3", Registry: c.registry})
		ch, err := loader.Load(filepath.Join(dir, "skyhook-operator-1.2.3.tgz"))
		if err != nil {
			t.Fatal(err)
		}
		var values []byte
		for _, f := range ch.Raw {
			if f.Name == "values.yaml" {
				values = f.Data
			}
		}
		if c.registry == "" && string(values) != string(source) {
			t.Error("the default release changed values.yaml")
		}
		if !strings.Contains(string(values), "repository: "+c.want+"skyhook-agent\n") || !strings.Contains(string(values), "# agent: the image stage pods run") {
			t.Errorf("%s: values.yaml does not name %sskyhook-agent with its comments", c.want, c.want)
		}
		rendered, err := helm.Render(ch, helm.Default, nil)
		if err != nil {
			t.Fatal(err)
		}
		manager := deployment(t, []byte(rendered.YAML())).Spec.Template.Spec.Containers[0]
		if manager.Image != c.want+"skyhook-operator:1.2.3" || !slices.Contains(manager.Args, "--agent-image="+c.want+"skyhook-agent:1.2.3") {
			t.Errorf("installed with no values: image %s, args %v; want both under %s", manager.Image, manager.Args, c.want)
		}
	}
}
