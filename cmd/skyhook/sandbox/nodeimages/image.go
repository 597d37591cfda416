package nodeimages

import (
	"fmt"
	"os"
	"runtime"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Platform is the platform of the images: Linux on this machine's
// architecture, as the busybox from this machine's apt-get and the node's
// containerd run on this machine.
func Platform() v1.Platform {
	return v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
}

// tools are the busybox applets linked in /bin: what the copy container's
// `mkdir -p DIR && cp -r ...` needs, and what a test may want to run with
// kubectl exec or in a step of its own image.
var tools = []string{"sh", "cat", "cp", "echo", "env", "false", "grep", "ln", "ls", "mkdir",
	"mv", "printf", "rm", "sed", "sleep", "test", "touch", "true", "wc"}

// busyboxLayer holds /bin/busybox and the links /bin/<tool> -> busybox. The
// pause and package images share it, so a registry stores it once.
func busyboxLayer(busybox string) (v1.Layer, error) {
	if busybox == "" {
		return nil, fmt.Errorf("no busybox binary given (see Busybox)")
	}
	data, err := os.ReadFile(busybox)
	if err != nil {
		return nil, fmt.Errorf("the busybox of the image: %w", err)
	}
	entries := []entry{{path: "bin/busybox", mode: 0o755, data: data}}
	for _, t := range tools {
		entries = append(entries, entry{path: "bin/" + t, mode: os.ModeSymlink | 0o777, target: "busybox"})
	}
	return layer(entries)
}

// image is an OCI image of the layers for Platform, run as root with the
// entrypoint, and dated epoch.
func image(entrypoint []string, layers ...v1.Layer) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(img, layers...)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	p := Platform()
	cfg.OS, cfg.Architecture = p.OS, p.Architecture
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.Entrypoint = entrypoint
	cfg.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	return mutate.ConfigFile(img, cfg)
}
