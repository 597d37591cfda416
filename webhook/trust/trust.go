// Package trust verifies, at admission, that the package images of a
// Skyhook or NodeWright carry a signature the cluster's ImageTrustPolicies
// trust, and names the digest that was verified so that admission pins it
// (containerSHA): the node runs the bytes that were verified, whatever the
// tag points at later.
//
// A package is checked against every policy whose images match it; each
// policy needs one of its authorities to have signed the digest (an image
// signature as cosign v3 writes it, see api/imagesig). A verified result
// is kept per policy version and digest, so admitting the same digest
// again (a re-apply, a status-free update) costs no registry round trip.
package trust

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	k8schain "github.com/google/go-containerregistry/pkg/authn/kubernetes"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/imagesig"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Verifier checks packages against the ImageTrustPolicies in the cluster.
type Verifier struct {
	// Policies lists ImageTrustPolicies; the manager's cached client, so
	// that a request pays no apiserver round trip for them.
	Policies client.Reader
	// Secrets reads the pull secrets; Namespace and PullSecrets name them
	// (the operator's --image-pull-secret, the credentials its stage pods
	// pull with).
	Secrets     client.Reader
	Namespace   string
	PullSecrets []string
	// Transport reaches the registries; http.DefaultTransport when nil.
	Transport http.RoundTripper
	// Timeout bounds the registry work of one request (default 6 s, inside
	// the apiserver's 10 s for the webhook).
	Timeout time.Duration

	once     sync.Once
	verified *cache.LRUExpireCache // policy version + repository@digest -> authority name
	mu       sync.Mutex
	compiled map[types.UID]*policy
}

// verifiedFor is how long a verified result is kept; any change to the
// policy starts afresh, since the key holds its resourceVersion.
const verifiedFor = 24 * time.Hour

// Package is one package of a rollout, as the request has it.
type Package struct {
	// Key is the package's key in spec.packages.
	Key            string
	Image, Version string
	// Digest is the digest to verify instead of resolving the tag: the
	// containerSHA the writer gave, or the one admission pinned before for
	// the same image and version. Empty resolves Image:Version.
	Digest string
	// Kept is a digest admitted before for this image and version: it is
	// pinned again without being verified again. Policies judge what a
	// request changes; they do not revisit what they admitted.
	Kept bool
}

// Outcome is what admission does with the packages.
type Outcome struct {
	// Pins are the verified digests by package key, for containerSHA.
	Pins map[string]string
	// Refused are the failures under Enforce policies.
	Refused field.ErrorList
	// Audited are the failures under Audit policies.
	Audited field.ErrorList
}

// Check verifies each package that a policy governs, several at once.
func (v *Verifier) Check(ctx context.Context, pkgs []Package) (Outcome, error) {
	out := Outcome{Pins: map[string]string{}}
	policies, err := v.policies(ctx)
	if err != nil || len(policies) == 0 {
		return out, err
	}
	ctx, cancel := context.WithTimeout(ctx, v.timeout())
	defer cancel()
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].Key < pkgs[j].Key }) // refusals in a stable order
	results := make([]Outcome, len(pkgs))
	var opts []remote.Option // made on first need: the pull secrets are read only then
	var group errgroup.Group
	group.SetLimit(parallelPackages)
	for i, pkg := range pkgs {
		governing := governingPolicies(policies, pkg.Image)
		switch {
		case len(governing) == 0:
			continue
		case pkg.Kept:
			out.Pins[pkg.Key] = pkg.Digest
			continue
		case opts == nil:
			if opts, err = v.remoteOptions(ctx); err != nil {
				return out, err
			}
		}
		group.Go(func() error {
			results[i] = v.checkOne(pkg, governing, opts)
			return nil
		})
	}
	_ = group.Wait() // checkOne reports its failures in its result
	for _, r := range results {
		maps.Copy(out.Pins, r.Pins)
		out.Refused = append(out.Refused, r.Refused...)
		out.Audited = append(out.Audited, r.Audited...)
	}
	return out, nil
}

// parallelPackages is how many packages of a request are verified at once:
// a package costs a few registry round trips, which at a remote registry's
// latency would add up past the webhook's timeout one after another.
const parallelPackages = 8

// checkOne verifies pkg under each governing policy and pins its digest
// when every Enforce policy, and at least one policy, verified it.
func (v *Verifier) checkOne(pkg Package, governing []*policy, opts []remote.Option) Outcome {
	out := Outcome{Pins: map[string]string{}}
	path := field.NewPath("spec", "packages", pkg.Key)
	digest, err := v.digestOf(pkg, opts)
	if err != nil {
		for _, p := range governing {
			report(&out, p, path.Child("image"), fmt.Sprintf("image %s:%s cannot be verified: %v", pkg.Image, pkg.Version, err))
		}
		return out
	}
	bundles := lazyBundles(digest, opts)
	verifiedBy, refused := 0, false
	for _, p := range governing {
		if p.broken != nil {
			report(&out, p, path.Child("image"), p.broken.Error())
			refused = refused || p.enforce
			continue
		}
		if err := v.verify(p, digest, bundles); err != nil {
			report(&out, p, path.Child("image"), fmt.Sprintf("image %s (%s:%s) is not signed by any authority of ImageTrustPolicy %s: %v", digest, pkg.Image, pkg.Version, p.name, err))
			refused = refused || p.enforce
			continue
		}
		verifiedBy++
	}
	if !refused && verifiedBy > 0 {
		out.Pins[pkg.Key] = digest.DigestStr()
	}
	return out
}

// report files a failure under the policy's mode.
func report(out *Outcome, p *policy, path *field.Path, msg string) {
	if p.enforce {
		out.Refused = append(out.Refused, field.Forbidden(path, msg))
		return
	}
	out.Audited = append(out.Audited, field.Forbidden(path, "(Audit) "+msg))
}

// verify checks the digest under p, from the kept results first.
func (v *Verifier) verify(p *policy, digest name.Digest, bundles func() ([]*bundle.Bundle, error)) error {
	key := p.version + "|" + digest.String()
	if _, ok := v.results().Get(key); ok {
		return nil
	}
	found, err := bundles()
	if err != nil {
		return err
	}
	h, err := v1.NewHash(digest.DigestStr())
	if err != nil {
		return err
	}
	a, err := imagesig.VerifyAny(found, h, p.authorities, imagesig.SignPredicateType)
	if err != nil {
		return err
	}
	v.results().Add(key, a.Name, verifiedFor)
	return nil
}

// digestOf is the digest to verify: the package's, or its tag's now.
func (v *Verifier) digestOf(pkg Package, opts []remote.Option) (name.Digest, error) {
	if pkg.Digest != "" {
		return name.NewDigest(pkg.Image+"@"+pkg.Digest, name.WeakValidation)
	}
	ref, err := name.NewTag(pkg.Image+":"+pkg.Version, name.WeakValidation)
	if err != nil {
		return name.Digest{}, err
	}
	d, err := imagesig.Resolve(ref, opts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("resolving the tag: %w", err)
	}
	return d, nil
}

// lazyBundles reads the digest's signatures once, on first need: a digest
// every policy already verified costs no registry request.
func lazyBundles(digest name.Digest, opts []remote.Option) func() ([]*bundle.Bundle, error) {
	return sync.OnceValues(func() ([]*bundle.Bundle, error) {
		found, _, err := imagesig.Bundles(digest, opts...)
		return found, err
	})
}

// governingPolicies are the policies whose patterns match the image as
// written or fully qualified.
func governingPolicies(policies []*policy, image string) []*policy {
	names := []string{image}
	if repo, err := name.NewRepository(image, name.WeakValidation); err == nil {
		names = append(names, repo.Name())
	}
	var out []*policy
	for _, p := range policies {
		if p.matches(names...) {
			out = append(out, p)
		}
	}
	return out
}

// policies lists the policies in force, compiled once per version. A
// cluster without the ImageTrustPolicy CRD has none.
func (v *Verifier) policies(ctx context.Context) ([]*policy, error) {
	var list skyhookv1.ImageTrustPolicyList
	if err := v.Policies.List(ctx, &list); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing ImageTrustPolicies: %w", err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	kept := make(map[types.UID]*policy, len(list.Items))
	out := make([]*policy, 0, len(list.Items))
	for i := range list.Items {
		item := &list.Items[i]
		p := v.compiled[item.UID]
		if p == nil || p.version != string(item.UID)+"/"+item.ResourceVersion {
			var errs field.ErrorList
			if p, errs = compile(item); len(errs) > 0 {
				// Admission refuses such a policy; one that got past it
				// (written while the webhook was not registered) fails
				// closed for the images it matches, and only those.
				p.broken = fmt.Errorf("ImageTrustPolicy %s cannot be used: %v", item.Name, errs.ToAggregate())
			}
		}
		kept[item.UID] = p
		out = append(out, p)
	}
	v.compiled = kept
	return out, nil
}

// remoteOptions reach registries with the operator's pull secrets, through
// one puller for the request, so that the packages of a registry share its
// connection and token instead of each starting over.
func (v *Verifier) remoteOptions(ctx context.Context) ([]remote.Option, error) {
	opts := []remote.Option{remote.WithContext(ctx)}
	if v.Transport != nil {
		opts = append(opts, remote.WithTransport(v.Transport))
	}
	var secrets []corev1.Secret
	for _, n := range v.PullSecrets {
		var s corev1.Secret
		if err := v.Secrets.Get(ctx, client.ObjectKey{Namespace: v.Namespace, Name: n}, &s); err == nil {
			secrets = append(secrets, s) // a missing secret is as good as none: the registry answers 401
		}
	}
	auth := remote.WithAuth(authn.Anonymous)
	if len(secrets) > 0 {
		kc, err := k8schain.NewFromPullSecrets(ctx, secrets)
		if err != nil {
			return nil, fmt.Errorf("reading the pull secrets %v: %w", v.PullSecrets, err)
		}
		auth = remote.WithAuthFromKeychain(kc)
	}
	opts = append(opts, auth)
	puller, err := remote.NewPuller(opts...)
	if err != nil {
		return nil, err
	}
	return append(opts, remote.Reuse(puller)), nil
}

func (v *Verifier) timeout() time.Duration {
	if v.Timeout > 0 {
		return v.Timeout
	}
	return 6 * time.Second
}

func (v *Verifier) results() *cache.LRUExpireCache {
	v.once.Do(func() { v.verified = cache.NewLRUExpireCache(4096) })
	return v.verified
}
