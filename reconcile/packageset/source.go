package packageset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/http/fetch"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/types"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/packageset/artifact"
	"github.com/skyhook-go/skyhook/reconcile/packageset/manifests"
)

// The source side of a PackageSet: its Flux source's artifact, downloaded
// and read.

// maxArtifactSize bounds an artifact's download (the compressed tarball);
// what it may unpack to is bounded by artifact.DefaultLimits.
const maxArtifactSize = 50 << 20

// artifact is the source's current artifact.
func (r *Reconciler) artifact(ctx context.Context, ps *skyhookv1.PackageSet) (*meta.Artifact, error) {
	ref := ps.Spec.SourceRef
	key := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
	if key.Namespace == "" {
		key.Namespace = ps.Namespace
	}
	var source interface{ GetArtifact() *meta.Artifact }
	switch ref.Kind {
	case sourcev1.GitRepositoryKind:
		src := &sourcev1.GitRepository{}
		if err := r.Client.Get(ctx, key, src); err != nil {
			return nil, fmt.Errorf("%s %s: %w", ref.Kind, key, err)
		}
		source = src
	case sourcev1.OCIRepositoryKind:
		src := &sourcev1.OCIRepository{}
		if err := r.Client.Get(ctx, key, src); err != nil {
			return nil, fmt.Errorf("%s %s: %w", ref.Kind, key, err)
		}
		source = src
	default:
		return nil, fmt.Errorf("sourceRef.kind %q: want GitRepository or OCIRepository", ref.Kind)
	}
	artifact := source.GetArtifact()
	if artifact == nil {
		return nil, fmt.Errorf("%s %s has no artifact yet", ref.Kind, key)
	}
	return artifact, nil
}

// fetch downloads the artifact (digest verified, size limited), extracts
// it within artifact.DefaultLimits and without path escapes, and reads the
// manifests at spec.path.
func (r *Reconciler) fetch(ctx context.Context, ps *skyhookv1.PackageSet, art *meta.Artifact) ([]manifests.Object, []string, error) {
	tmp, err := os.MkdirTemp("", "packageset-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	// Downloaded as a file, not untarred by the fetcher: its untar bounds
	// the declared sizes only (artifact.Extract says what else it bounds).
	const archive = "artifact.tar.gz"
	fetcher := fetch.New(fetch.WithRetries(2), fetch.WithMaxDownloadSize(maxArtifactSize),
		fetch.WithFileName(archive), fetch.WithHostnameOverwrite(r.HostnameOverwrite))
	if err := fetcher.FetchWithContext(ctx, art.URL, art.Digest, tmp); err != nil {
		return nil, nil, fmt.Errorf("fetching revision %s: %w", art.Revision, err)
	}
	dir := filepath.Join(tmp, "src")
	if err := extract(filepath.Join(tmp, archive), dir); err != nil {
		return nil, nil, fmt.Errorf("revision %s: %w", art.Revision, err)
	}
	root := filepath.Join(dir, filepath.Clean("/"+ps.Spec.Path))
	if _, err := os.Stat(root); err != nil {
		return nil, []string{fmt.Sprintf("spec.path %q is not in revision %s", ps.Spec.Path, art.Revision)}, nil
	}
	objects, problems := manifests.Load(root)
	return objects, problems, nil
}

func extract(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	return artifact.Extract(f, dir, artifact.DefaultLimits)
}
