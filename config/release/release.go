// Package release assembles a Skyhook release's files (`make release`,
// docs/release.md): the Helm chart stamped with the version, the chart
// rendered as install.yaml and install-certmanager.yaml, the CLI archives,
// the krew plugin manifest that points at them, and checksums.txt. The same
// inputs give the same bytes, so a release can be checked by rebuilding it.
// The images are config/images'; the chart's push to a registry is here
// (push.go) because it is a release file.
package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
)

// Version is a release's version.
type Version struct {
	// Given is VERSION as given (v1.2.3 or 1.2.3): what the binaries say
	// and, by default, the images' tag.
	Given string
	// Semver is Given without a leading v: the chart's version (Helm wants
	// semver) and the version in the archives' names.
	Semver string
}

// ParseVersion reads VERSION: a semantic version, with or without a
// leading v, with an optional pre-release (1.2.3-rc.1). Build metadata
// (+...) is refused: an image tag cannot hold a '+'.
func ParseVersion(s string) (Version, error) {
	if s == "" {
		return Version{}, fmt.Errorf("VERSION is empty: give the release's version, as in make release VERSION=1.2.3")
	}
	bare := strings.TrimPrefix(s, "v")
	v, err := semver.StrictNewVersion(bare)
	if err != nil {
		return Version{}, fmt.Errorf("VERSION %q is not a release version (want 1.2.3, v1.2.3 or 1.2.3-rc.1): %v", s, err)
	}
	if v.Metadata() != "" {
		return Version{}, fmt.Errorf("VERSION %q: build metadata (+%s) cannot be part of an image tag", s, v.Metadata())
	}
	return Version{Given: s, Semver: bare}, nil
}

// DefaultRegistry is the images' repository prefix, the chart's default.
const DefaultRegistry = "ghcr.io/skyhook-go"

// Homepage is the project's page, and where the releases are downloaded.
const Homepage = "https://github.com/skyhook-go/skyhook"

// Options say what to assemble.
type Options struct {
	// Version is VERSION (see ParseVersion).
	Version string
	// Tag is the images' tag, which the chart's appVersion names; default
	// Version, as `make images` tags them.
	Tag string
	// Registry is the images' repository prefix; default DefaultRegistry.
	Registry string
	// DownloadURL is where the CLI archives will be downloaded from, for
	// the krew manifest; default the GitHub release of the tag v<semver>.
	DownloadURL string
	// License is the LICENSE file every archive holds.
	License []byte
	// Build returns the CLI binary for a platform, stamped with the version.
	Build BuildFunc
}

// BuildFunc returns the CLI binary built for the platform with the version
// stamped in. The command cross-compiles; tests hand in stand-ins.
type BuildFunc func(ctx context.Context, p Platform, version string) ([]byte, error)

// Artefact is a file of the release.
type Artefact struct {
	// Name is the file's name in the release folder.
	Name   string
	Size   int64
	SHA256 string // hex
}

// Assemble writes the release's files into dir, checksums.txt last, and
// lists them in the order written. Files of other releases in dir are
// left alone, and not in checksums.txt.
func Assemble(ctx context.Context, dir string, o Options) ([]Artefact, error) {
	v, err := ParseVersion(o.Version)
	if err != nil {
		return nil, err
	}
	o = o.withDefaults(v)
	if len(o.License) == 0 {
		return nil, fmt.Errorf("the LICENSE to put in the archives is empty")
	}
	if o.Build == nil {
		return nil, fmt.Errorf("no build function for the CLI")
	}
	// The chart and install files name the images by these; refuse what
	// no registry would take before anything is written.
	if _, err := name.NewTag(o.Registry + "/skyhook-operator:" + o.Tag); err != nil {
		return nil, fmt.Errorf("IMAGE_REGISTRY %q, IMAGE_TAG %q: not an image reference: %w", o.Registry, o.Tag, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &writer{dir: dir}
	ch, err := writeChart(w, v, o.Tag, o.Registry)
	if err != nil {
		return nil, err
	}
	if err := writeInstalls(w, ch, o.Registry); err != nil {
		return nil, err
	}
	archives, err := writeArchives(ctx, w, v, o)
	if err != nil {
		return nil, err
	}
	if err := writeKrewManifest(w, v, o.DownloadURL, archives); err != nil {
		return nil, err
	}
	if _, err := w.put(ChecksumsFile, checksums(w.written)); err != nil {
		return nil, err
	}
	return w.written, nil
}

func (o Options) withDefaults(v Version) Options {
	if o.Tag == "" {
		o.Tag = v.Given
	}
	if o.Registry == "" {
		o.Registry = DefaultRegistry
	}
	if o.DownloadURL == "" {
		o.DownloadURL = Homepage + "/releases/download/v" + v.Semver
	}
	o.DownloadURL = strings.TrimSuffix(o.DownloadURL, "/")
	return o
}

// writer writes the release's files and remembers what it wrote.
type writer struct {
	dir     string
	written []Artefact
}

func (w *writer) put(name string, data []byte) (Artefact, error) {
	if err := os.WriteFile(filepath.Join(w.dir, name), data, 0o644); err != nil {
		return Artefact{}, err
	}
	a := Artefact{Name: name, Size: int64(len(data)), SHA256: sha256Hex(data)}
	w.written = append(w.written, a)
	return a, nil
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ChecksumsFile lists the sha256 of every other file of the release.
const ChecksumsFile = "checksums.txt"

// checksums is what `sha256sum` prints for the files, sorted by name, so
// that `sha256sum -c checksums.txt` checks a download.
func checksums(files []Artefact) []byte {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b Artefact) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	for _, f := range sorted {
		fmt.Fprintf(&b, "%s  %s\n", f.SHA256, f.Name)
	}
	return []byte(b.String())
}

// WriteTable prints the artefacts as a table: name, size and the first 12
// hex digits of the sha256 (checksums.txt has them whole).
func WriteTable(w io.Writer, artefacts []Artefact) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ARTEFACT\tSIZE\tSHA256")
	for _, a := range artefacts {
		fmt.Fprintf(tw, "%s\t%s\t%.12s\n", a.Name, humanSize(a.Size), a.SHA256)
	}
	return tw.Flush()
}

// humanSize is a size in bytes, KiB or MiB, with one decimal.
func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}
