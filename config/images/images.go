// Package images assembles the Skyhook images: per platform, one layer
// holding a static binary, which is the entrypoint, gathered in an OCI
// image index. go-containerregistry does the assembly, so no container
// daemon or Dockerfile is needed, and every time in the image is fixed, so
// the digests are a function of the binaries alone.
package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Source is the repository the images are built from (their source label).
const Source = "https://github.com/skyhook-go/skyhook"

// NonRoot is the user of an image that needs no privilege: the uid and gid
// distroless images use for "nonroot", numeric so that the kubelet can
// check a pod's runAsNonRoot without an /etc/passwd in the image.
const NonRoot = "65532:65532"

// The OCI labels (annotations keys) the images carry.
const (
	LabelTitle    = "org.opencontainers.image.title"
	LabelVersion  = "org.opencontainers.image.version"
	LabelSource   = "org.opencontainers.image.source"
	LabelRevision = "org.opencontainers.image.revision"
	LabelLicenses = "org.opencontainers.image.licenses"
	LabelCreated  = "org.opencontainers.image.created"
)

// epoch is every time in the images: the layer's file, the config's
// creation and the created label. A fixed time keeps the digest a function
// of the binary alone.
var epoch = time.Unix(0, 0).UTC()

// Spec is what an image says besides its binary.
type Spec struct {
	// Name is the image's title, and the binary is /<Name>.
	Name string
	// User runs the entrypoint ("uid:gid"); empty is root.
	User string
	// Version and Revision (the git commit) go into the labels.
	Version, Revision string
}

// Binary is a static binary built for one platform.
type Binary struct {
	Platform v1.Platform
	Data     []byte
}

// Index assembles the image index of the binaries, one image per
// platform, in their order.
func Index(s Spec, binaries []Binary) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, b := range binaries {
		img, err := Image(s, b)
		if err != nil {
			return nil, fmt.Errorf("%s for %s: %w", s.Name, b.Platform, err)
		}
		platform := b.Platform
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	}
	return idx, nil
}

// Image is the image of one platform's binary.
func Image(s Spec, b Binary) (v1.Image, error) {
	if len(b.Data) == 0 {
		return nil, fmt.Errorf("the binary is empty")
	}
	layer, err := binaryLayer(s.Name, b.Data)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant, cfg.OSVersion = b.Platform.OS, b.Platform.Architecture, b.Platform.Variant, b.Platform.OSVersion
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.Entrypoint = []string{"/" + s.Name}
	cfg.Config.User = s.User
	cfg.Config.Labels = labels(s)
	return mutate.ConfigFile(img, cfg)
}

// labels are the OCI labels of the spec; an unknown version or revision
// is left out rather than said empty.
func labels(s Spec) map[string]string {
	l := map[string]string{
		LabelTitle:    s.Name,
		LabelSource:   Source,
		LabelLicenses: "Apache-2.0",
		LabelCreated:  epoch.Format(time.RFC3339),
	}
	if s.Version != "" {
		l[LabelVersion] = s.Version
	}
	if s.Revision != "" {
		l[LabelRevision] = s.Revision
	}
	return l
}

// binaryLayer is a layer holding the binary at /<name>, executable and
// owned by root.
func binaryLayer(name string, binary []byte) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: name, Mode: 0o755, Size: int64(len(binary)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
