// Package imageref reads a package or agent image reference the way the
// API defines it: the tag as written (a missing tag is not "latest"), the
// digest, and the registry it resolves to. Admission, defaulting and the
// stage pods read images through it.
package imageref

import (
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Ref is an image reference as written, split into its parts.
type Ref struct {
	// Repository is the image without tag or digest, registry (and port)
	// included as written.
	Repository string
	// Tag is the tag written in the image, empty when none was.
	Tag string
	// Digest is the digest written in the image, empty when none was.
	Digest string
	// Registry is the registry host the image resolves to (index.docker.io
	// when the image names none).
	Registry string
	// ExplicitRegistry reports whether the image names its registry.
	ExplicitRegistry bool
}

// Parse splits an image reference. go-containerregistry parses it (and
// knows about registries with ports); it fills in "latest" for a missing tag,
// so whether a tag was written is read from the string itself: a ':' after
// the last '/' of the part before any '@'.
func Parse(image string) (Ref, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return Ref{}, err
	}
	out := Ref{Registry: ref.Context().RegistryStr(), Repository: image}
	beforeDigest := image
	if i := strings.IndexByte(image, '@'); i >= 0 {
		out.Digest = image[i+1:]
		beforeDigest = image[:i]
	}
	out.Repository = beforeDigest
	if i := strings.LastIndexByte(beforeDigest, ':'); i > strings.LastIndexByte(beforeDigest, '/') {
		out.Tag = beforeDigest[i+1:]
		out.Repository = beforeDigest[:i]
	}
	first, _, hasSlash := strings.Cut(out.Repository, "/")
	out.ExplicitRegistry = hasSlash && (strings.ContainsAny(first, ".:") || first == "localhost")
	return out, nil
}
