package nodeimages

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/skyhook-go/skyhook/config/images"
)

// PushComponents builds this tree's operator and agent images for Platform,
// stamped with version (two versions are two digests), as `make images`
// builds them, and pushes each as <image>:<version>. It returns each
// component's reference by digest, by its name ("operator", "agent").
func (r *Registry) PushComponents(ctx context.Context, version string) (map[string]string, error) {
	refs := map[string]string{}
	for _, c := range images.Components {
		idx, err := images.Build(ctx, c, images.BuildOptions{Version: version, Platforms: []v1.Platform{Platform()}})
		if err != nil {
			return nil, fmt.Errorf("building the %s image: %w", c.Name, err)
		}
		if refs[c.Name], err = r.PushIndex(ctx, c.Image+":"+version, idx); err != nil {
			return nil, err
		}
	}
	return refs, nil
}
