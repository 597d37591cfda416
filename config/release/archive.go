package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Platform is an OS and architecture the CLI is released for.
type Platform struct {
	OS, Arch string
}

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Platforms are the CLI's: those krew users and NodeWright's kubectl plugin
// have (Windows is left out: the sandbox needs Linux process groups).
var Platforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// Binary is the CLI's name in the archives: kubectl runs it as a plugin.
const Binary = "kubectl-skyhook"

// ArchiveFile is the CLI archive's name for a platform.
func ArchiveFile(v Version, p Platform) string {
	return fmt.Sprintf("skyhook_%s_%s_%s.tar.gz", v.Semver, p.OS, p.Arch)
}

// archive is a written CLI archive, for the krew manifest.
type archive struct {
	platform Platform
	Artefact
}

// writeArchives builds the CLI for each platform and writes its archive.
func writeArchives(ctx context.Context, w *writer, v Version, o Options) ([]archive, error) {
	var out []archive
	for _, p := range Platforms {
		bin, err := o.Build(ctx, p, v.Given)
		if err != nil {
			return nil, fmt.Errorf("building the CLI for %s: %w", p, err)
		}
		if len(bin) == 0 {
			return nil, fmt.Errorf("the CLI built for %s is empty", p)
		}
		data, err := tarGz([]file{{name: "LICENSE", mode: 0o644, data: o.License}, {name: Binary, mode: 0o755, data: bin}})
		if err != nil {
			return nil, err
		}
		a, err := w.put(ArchiveFile(v, p), data)
		if err != nil {
			return nil, err
		}
		out = append(out, archive{platform: p, Artefact: a})
	}
	return out, nil
}

// file is a regular file of an archive.
type file struct {
	name string
	mode int64
	data []byte
}

// epoch is every file's time in the archives: with it, and no owner, the
// same files give the same bytes, whoever builds them and when.
var epoch = time.Unix(0, 0).UTC()

// tarGz is a reproducible .tar.gz of the files, sorted by name: owned by
// uid and gid 0 without names, modified at the epoch, and a gzip header
// without a name or a time.
func tarGz(files []file) ([]byte, error) {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b file) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, f := range sorted {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: epoch}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
