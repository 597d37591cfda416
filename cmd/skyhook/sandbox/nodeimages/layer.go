package nodeimages

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is every time in the images (files and config), so that a digest
// depends on the contents alone, as in config/images.
var epoch = time.Unix(0, 0).UTC()

// entry is one file, directory or symbolic link of a layer.
type entry struct {
	// path is slash-separated and relative to the image's root.
	path string
	// mode holds the permission bits, with fs.ModeDir or fs.ModeSymlink
	// for a directory or a link.
	mode fs.FileMode
	// data is a regular file's content.
	data []byte
	// target is a link's target.
	target string
}

// layer is a layer (a tar, gzipped by go-containerregistry as it is
// pushed) of the entries, in the order of their paths, each parent directory included (0755 unless an entry says
// otherwise), every file owned by root and dated epoch: the same entries
// always give the same bytes.
func layer(entries []entry) (v1.Layer, error) {
	byPath := map[string]entry{}
	for _, e := range entries {
		p := path.Clean(strings.TrimPrefix(e.path, "/"))
		if p == "." || p == ".." || strings.HasPrefix(p, "../") {
			return nil, fmt.Errorf("%q is not a path inside the image", e.path)
		}
		if _, dup := byPath[p]; dup {
			return nil, fmt.Errorf("%q is in the layer twice", p)
		}
		e.path = p
		byPath[p] = e
	}
	for p := range byPath {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if e, ok := byPath[dir]; ok {
				if !e.mode.IsDir() {
					return nil, fmt.Errorf("%q is a file and the directory of %q", dir, p)
				}
				continue
			}
			byPath[dir] = entry{path: dir, mode: fs.ModeDir | 0o755}
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range slices.Sorted(maps.Keys(byPath)) {
		e := byPath[p]
		hdr := &tar.Header{Name: p, Mode: int64(e.mode.Perm()), ModTime: epoch, Format: tar.FormatPAX}
		switch {
		case e.mode.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, p+"/"
		case e.mode&fs.ModeSymlink != 0:
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, e.target
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
