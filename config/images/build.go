package images

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

const module = "github.com/skyhook-go/skyhook"

// Component is a binary of this module shipped as an image.
type Component struct {
	// Name is how -images names it.
	Name string
	// Image is its repository under the registry, and its title.
	Image string
	// Package is its main package.
	Package string
	// VersionVar is the variable that -ldflags -X stamps with the version.
	VersionVar string
	// User runs it in the image; empty is root.
	User string
}

// Components are the images this module ships.
var Components = []Component{
	{Name: "operator", Image: "skyhook-operator", Package: module + "/cmd/manager",
		VersionVar: module + "/cmd/manager/operator.Version", User: NonRoot},
	// The agent keeps root: stage pods run it privileged, and it chroots
	// into the host's root filesystem to run the package's steps.
	{Name: "agent", Image: "skyhook-agent", Package: module + "/cmd/skyhook-agent",
		VersionVar: "main.Version"},
}

// ComponentsNamed are the components of a comma-separated list of names.
func ComponentsNamed(list string) ([]Component, error) {
	var out []Component
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(Components, func(c Component) bool { return c.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("no image %q (operator, agent)", name)
		}
		out = append(out, Components[i])
	}
	return out, nil
}

// Ref is the component's image in the registry (a repository prefix such
// as ghcr.io/skyhook-go) under the tag.
func (c Component) Ref(registry, tag string) (name.Tag, error) {
	return name.NewTag(registry + "/" + c.Image + ":" + tag)
}

// BuildOptions say how to build the images.
type BuildOptions struct {
	Version, Revision string
	Platforms         []v1.Platform
	// Log receives the go build commands as they run.
	Log io.Writer
}

// Build compiles the component for each platform and assembles its index.
func Build(ctx context.Context, c Component, o BuildOptions) (v1.ImageIndex, error) {
	dir, err := os.MkdirTemp("", "skyhook-images-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var binaries []Binary
	for _, p := range o.Platforms {
		data, err := compile(ctx, c, p, o, dir)
		if err != nil {
			return nil, err
		}
		binaries = append(binaries, Binary{Platform: p, Data: data})
	}
	return Index(Spec{Name: c.Image, User: c.User, Version: o.Version, Revision: o.Revision}, binaries)
}

// compile builds a static, stripped binary of the component for the
// platform; -trimpath keeps the machine's paths out of it (and so out of
// the digest).
func compile(ctx context.Context, c Component, p v1.Platform, o BuildOptions, dir string) ([]byte, error) {
	if p.Variant != "" {
		return nil, fmt.Errorf("platform %s: variants are not supported", p)
	}
	out := filepath.Join(dir, c.Image+"-"+p.OS+"-"+p.Architecture)
	ldflags := fmt.Sprintf("-s -w -X %s=%s", c.VersionVar, o.Version)
	env := []string{"CGO_ENABLED=0", "GOOS=" + p.OS, "GOARCH=" + p.Architecture}
	cmd := exec.CommandContext(ctx, GoCommand(), "build", "-trimpath", "-ldflags", ldflags, "-o", out, c.Package)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if o.Log != nil {
		fmt.Fprintf(o.Log, "%s %s build -trimpath -ldflags %q -o %s %s\n", strings.Join(env, " "), cmd.Path, ldflags, out, c.Package)
	}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build %s for %s: %w", c.Package, p, err)
	}
	return os.ReadFile(out)
}

// GoCommand is $GO, or else the go of the toolchain this program was built
// with (`go run` and `go test` then build with the toolchain they run).
func GoCommand() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	if g := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(g) {
		return g
	}
	return "go"
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
