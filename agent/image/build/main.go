// Command build makes the agent image from the static agent binary (`make
// agent-image`): a tarball that `docker load` and `crane push` take, and
// with -push, the image in a registry.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/skyhook-go/skyhook/agent/image"
)

func main() {
	binary := flag.String("binary", "bin/skyhook-agent", "the static agent binary (make agent)")
	tag := flag.String("tag", "ghcr.io/skyhook-go/skyhook-agent:dev", "the image's name and tag")
	out := flag.String("o", "bin/skyhook-agent-image.tar", "the image tarball to write (empty: none)")
	push := flag.Bool("push", false, "also push the image to -tag's registry (credentials of ~/.docker/config.json)")
	version := flag.String("version", "dev", "the version label")
	flag.Parse()
	if err := build(*binary, *tag, *out, *version, *push); err != nil {
		fmt.Fprintln(os.Stderr, "agent image:", err)
		os.Exit(1)
	}
}

func build(binary, tag, out, version string, push bool) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("-tag %q: %w", tag, err)
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("-binary: %w (make agent builds it)", err)
	}
	img, err := image.Build(data, image.Options{Version: version, Source: "https://github.com/skyhook-go/skyhook"})
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	if out != "" {
		if err := tarball.WriteToFile(out, ref, img); err != nil {
			return err
		}
		fmt.Printf("wrote %s (%s@%s)\n", out, ref, digest)
	}
	if push {
		if err := remote.Write(ref, img, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return err
		}
		fmt.Printf("pushed %s@%s\n", ref, digest)
	}
	return nil
}
