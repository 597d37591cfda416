package nodeimages

import (
	"context"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/skyhook-go/skyhook/config/images"
)

// AgentVersion is the version stamped into the agent that AgentImage
// builds: the working tree's agent, not a release.
const AgentVersion = "devel"

// AgentImage is the agent's image for Platform, built from this module's
// source as `make images` builds it (config/images), so that the node's
// stage pods run the agent of the code under test. go build's commands go
// to log (nil discards them); the build cache makes calls after the first
// quick.
func AgentImage(ctx context.Context, log io.Writer) (v1.Image, error) {
	agent, err := images.ComponentsNamed("agent")
	if err != nil {
		return nil, err
	}
	p := Platform()
	idx, err := images.Build(ctx, agent[0], images.BuildOptions{
		Version: AgentVersion, Platforms: []v1.Platform{p}, Log: log})
	if err != nil {
		return nil, err
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, m := range manifest.Manifests {
		if m.Platform != nil && m.Platform.OS == p.OS && m.Platform.Architecture == p.Architecture {
			return idx.Image(m.Digest)
		}
	}
	return nil, fmt.Errorf("the agent's index has no image for %s", p)
}
