package release

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// The media types of a chart in an OCI registry, as Helm's pkg/registry
// names them: the manifest's config is Chart.yaml's metadata as JSON, its
// one layer the packaged chart.
const (
	HelmConfigMediaType types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	HelmChartMediaType  types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// ChartRef is where a chart goes under a registry prefix:
// <registry>/charts/<name>:<version>, as `helm push <tgz>
// oci://<registry>/charts` puts it, so that `helm install
// oci://<registry>/charts/<name> --version <version>` finds it.
func ChartRef(registry string, meta *chart.Metadata) (name.Tag, error) {
	return name.NewTag(registry + "/charts/" + meta.Name + ":" + meta.Version)
}

// PushChart pushes a packaged chart to its ChartRef under the registry,
// and returns the reference and the manifest's digest.
func PushChart(ctx context.Context, registry string, tgz []byte, options ...remote.Option) (name.Tag, v1.Hash, error) {
	img, meta, err := ChartImage(tgz)
	if err != nil {
		return name.Tag{}, v1.Hash{}, err
	}
	ref, err := ChartRef(registry, meta)
	if err != nil {
		return name.Tag{}, v1.Hash{}, fmt.Errorf("-registry %q: %w", registry, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return name.Tag{}, v1.Hash{}, err
	}
	options = append(options, remote.WithContext(ctx))
	if err := remote.Write(ref, img, options...); err != nil {
		return name.Tag{}, v1.Hash{}, fmt.Errorf("pushing %s: %w", ref, err)
	}
	return ref, digest, nil
}

// ChartImage is a packaged chart as Helm stores it in a registry, and the
// chart's metadata.
func ChartImage(tgz []byte) (v1.Image, *chart.Metadata, error) {
	ch, err := loader.LoadArchive(bytes.NewReader(tgz))
	if err != nil {
		return nil, nil, fmt.Errorf("the chart: %w", err)
	}
	config, err := json.Marshal(ch.Metadata)
	if err != nil {
		return nil, nil, err
	}
	layer := static.NewLayer(tgz, HelmChartMediaType)
	layerDesc, err := partial.Descriptor(layer)
	if err != nil {
		return nil, nil, err
	}
	configDigest, configSize, err := v1.SHA256(bytes.NewReader(config))
	if err != nil {
		return nil, nil, err
	}
	manifest, err := json.Marshal(v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        v1.Descriptor{MediaType: HelmConfigMediaType, Digest: configDigest, Size: configSize},
		Layers:        []v1.Descriptor{{MediaType: HelmChartMediaType, Digest: layerDesc.Digest, Size: layerDesc.Size}},
		// Helm's annotations, but no creation time, so the digest depends
		// on the chart alone.
		Annotations: map[string]string{
			"org.opencontainers.image.title":       ch.Metadata.Name,
			"org.opencontainers.image.version":     ch.Metadata.Version,
			"org.opencontainers.image.description": ch.Metadata.Description,
			"org.opencontainers.image.url":         ch.Metadata.Home,
		},
	})
	if err != nil {
		return nil, nil, err
	}
	img, err := partial.CompressedToImage(chartImage{config: config, manifest: manifest, layer: layer, layerDigest: layerDesc.Digest})
	return img, ch.Metadata, err
}

// chartImage is the least go-containerregistry needs to push an image
// whose config is not an image config: the raw config and manifest, and
// the layer.
type chartImage struct {
	config, manifest []byte
	layer            v1.Layer
	layerDigest      v1.Hash
}

func (i chartImage) RawConfigFile() ([]byte, error)      { return i.config, nil }
func (i chartImage) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (i chartImage) RawManifest() ([]byte, error)        { return i.manifest, nil }

func (i chartImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if h != i.layerDigest {
		return nil, fmt.Errorf("the chart has no layer %s", h)
	}
	return i.layer, nil
}
