// Package image builds the agent image: one layer holding the static
// skyhook-agent binary, which is the image's entrypoint (stage pods pass the
// mode, host root and copy directory as arguments). go-containerregistry
// assembles it, so no container daemon or Dockerfile is needed, and the
// same binary always gives the same digest.
package image

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

// BinaryPath is where the agent is in the image.
const BinaryPath = "/skyhook-agent"

// epoch stamps the layer's file and the image: a fixed time keeps the
// digest a function of the binary alone.
var epoch = time.Unix(0, 0).UTC()

// Options describe the image besides its binary.
type Options struct {
	// Version goes into the org.opencontainers.image.version label.
	Version string
	// Source goes into the org.opencontainers.image.source label.
	Source string
}

// Build makes the linux/amd64 image of the agent binary.
func Build(binary []byte, o Options) (v1.Image, error) {
	if len(binary) == 0 {
		return nil, fmt.Errorf("the agent binary is empty")
	}
	layerTar, err := singleFileTar(BinaryPath[1:], binary, 0o755)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Created = "linux", "amd64", v1.Time{Time: epoch}
	cfg.Config.Entrypoint = []string{BinaryPath}
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":   "skyhook-agent",
		"org.opencontainers.image.version": o.Version,
		"org.opencontainers.image.source":  o.Source,
	}
	return mutate.ConfigFile(img, cfg)
}

// singleFileTar is a tar stream holding one regular file owned by root.
func singleFileTar(name string, content []byte, mode int64) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: name, Mode: mode, Size: int64(len(content)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(content); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
