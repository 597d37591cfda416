package main

import (
	"context"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/sign"

	"github.com/skyhook-go/skyhook/api/imagesig"
)

// registryOptions reach a registry as the push and pull commands do: the
// docker credentials of this machine, and plain HTTP when asked.
func registryOptions(ctx context.Context, insecure bool) ([]name.Option, []remote.Option) {
	var nameOpts []name.Option
	if insecure {
		nameOpts = append(nameOpts, name.Insecure)
	}
	return nameOpts, []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
}

// loadSigningKey reads the private key in keyFile, before anything is
// pushed: a wrong password or path leaves the registry as it was.
func loadSigningKey(keyFile string) (sign.Keypair, error) {
	key, err := imagesig.LoadPrivateKeyFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("--sign-key %s: %w", keyFile, err)
	}
	return key, nil
}

// signArtifact signs the artifact at digestRef (repository@digest) with key
// and attaches the signature to it.
func signArtifact(ctx context.Context, digestRef string, key sign.Keypair, insecure bool) error {
	nameOpts, remoteOpts := registryOptions(ctx, insecure)
	d, err := name.NewDigest(digestRef, nameOpts...)
	if err != nil {
		return err
	}
	return imagesig.Sign(d, key, remoteOpts...)
}

// verifiedDigest resolves ref (repository:tag or @digest) and verifies
// that the public key in keyFile signed that digest; it returns the digest
// reference, so that what is read next is what was verified.
func verifiedDigest(ctx context.Context, ref, keyFile string, insecure bool) (string, error) {
	raw, err := os.ReadFile(keyFile)
	if err != nil {
		return "", err
	}
	authority, err := imagesig.KeyAuthority(keyFile, string(raw))
	if err != nil {
		return "", fmt.Errorf("--verify-key %s: %w", keyFile, err)
	}
	nameOpts, remoteOpts := registryOptions(ctx, insecure)
	r, err := name.ParseReference(ref, nameOpts...)
	if err != nil {
		return "", err
	}
	d, err := imagesig.Resolve(r, remoteOpts...)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", ref, err)
	}
	bundles, _, err := imagesig.Bundles(d, remoteOpts...)
	if err != nil {
		return "", err
	}
	h, err := v1.NewHash(d.DigestStr())
	if err != nil {
		return "", err
	}
	if _, err := imagesig.VerifyAny(bundles, h, []*imagesig.Authority{authority}, imagesig.SignPredicateType); err != nil {
		return "", fmt.Errorf("%s is not signed by %s: %w", d, keyFile, err)
	}
	return d.String(), nil
}
