package images

import (
	"context"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// refName is the annotation by which an OCI layout names what it holds
// (skopeo's oci:DIR:TAG finds the index by it).
const refName = "org.opencontainers.image.ref.name"

// WriteLayout writes the index as an OCI image layout in dir, replacing
// what was there, its index.json naming it by the tag.
func WriteLayout(dir string, ref name.Tag, idx v1.ImageIndex) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{refName: ref.TagStr()}))
}

// Push puts the index in its registry under the tag, with the credentials
// of the default keychain (~/.docker/config.json, credential helpers).
func Push(ctx context.Context, ref name.Tag, idx v1.ImageIndex) error {
	return remote.WriteIndex(ref, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
}
