// Command build makes the Skyhook images (`make images`, `make push`): it
// compiles the operator and the agent for each platform, assembles one OCI
// image index per image (config/images), writes each as an OCI image
// layout under -o and, with -push, pushes it to -registry.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/skyhook-go/skyhook/config/images"
)

type options struct {
	images, registry, tag, out string
	push                       bool
	build                      images.BuildOptions
}

func main() {
	var o options
	var platforms string
	flag.StringVar(&o.images, "images", "operator,agent", "the images to build, comma-separated")
	flag.StringVar(&o.registry, "registry", "ghcr.io/skyhook-go", "the repository prefix: <registry>/skyhook-operator, <registry>/skyhook-agent")
	flag.StringVar(&o.tag, "tag", "", "the images' tag (default: -version)")
	flag.StringVar(&o.build.Version, "version", "dev", "the version stamped into the binaries and the labels")
	flag.StringVar(&o.build.Revision, "revision", "", "the git commit, for the revision label")
	flag.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64", "the platforms, comma-separated")
	flag.StringVar(&o.out, "o", "bin/images", "write each image as an OCI image layout in <dir>/<image> (empty: none)")
	flag.BoolVar(&o.push, "push", false, "push the images (credentials of the default keychain: ~/.docker/config.json)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, platforms); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, platforms string) error {
	components, err := images.ComponentsNamed(o.images)
	if err != nil {
		return err
	}
	if o.build.Platforms, err = parsePlatforms(platforms); err != nil {
		return err
	}
	if o.tag == "" {
		o.tag = o.build.Version
	}
	o.build.Log = os.Stdout
	for _, c := range components {
		if err := one(ctx, o, c); err != nil {
			return fmt.Errorf("%s: %w", c.Image, err)
		}
	}
	return nil
}

// one builds, writes and pushes one image.
func one(ctx context.Context, o options, c images.Component) error {
	ref, err := c.Ref(o.registry, o.tag)
	if err != nil {
		return err
	}
	idx, err := images.Build(ctx, c, o.build)
	if err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	where := ""
	if o.out != "" {
		dir := filepath.Join(o.out, c.Image)
		if err := images.WriteLayout(dir, ref, idx); err != nil {
			return err
		}
		where = " in " + dir
	}
	fmt.Printf("built %s@%s%s\n", ref, digest, where)
	if o.push {
		if err := images.Push(ctx, ref, idx); err != nil {
			return err
		}
		fmt.Printf("pushed %s@%s\n", ref, digest)
	}
	return nil
}

func parsePlatforms(list string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, s := range strings.Split(list, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("-platforms: %w", err)
		}
		out = append(out, *p)
	}
	return out, nil
}
