package trust

import (
	"fmt"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skyhook-go/skyhook/api/imagesig"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// policy is an ImageTrustPolicy ready to verify with: its patterns
// compiled, its keys and trusted roots parsed.
type policy struct {
	name        string
	version     string // uid and resourceVersion: a result verified under it is kept under it
	enforce     bool
	patterns    []glob.Glob
	authorities []*imagesig.Authority
	// broken says why the policy cannot verify (what Validate refuses):
	// every image it matches is refused under its mode.
	broken error
}

// Validate checks that p can be verified with: the errors name each field
// that is wrong and why. The CRD's schema already checks shapes and sizes;
// this checks what only parsing shows (patterns, keys, trusted roots,
// regular expressions).
func Validate(p *skyhookv1.ImageTrustPolicy) field.ErrorList {
	_, errs := compile(p)
	return errs
}

// compile makes p ready to verify with, or says why it cannot be.
func compile(p *skyhookv1.ImageTrustPolicy) (*policy, field.ErrorList) {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	out := &policy{name: p.Name, version: string(p.UID) + "/" + p.ResourceVersion, enforce: p.Spec.Mode != skyhookv1.TrustAudit}
	for i, pattern := range p.Spec.Images {
		// gobwas/glob without separators: "*" crosses "/", as the patterns
		// of Kyverno's and Sigstore's image policies do.
		g, err := glob.Compile(pattern)
		if err != nil {
			errs = append(errs, field.Invalid(spec.Child("images").Index(i), pattern, fmt.Sprintf("not a pattern: %v", err)))
			continue
		}
		out.patterns = append(out.patterns, g)
	}
	names := map[string]bool{}
	for i, a := range p.Spec.Authorities {
		path := spec.Child("authorities").Index(i)
		if names[a.Name] {
			errs = append(errs, field.Duplicate(path.Child("name"), a.Name))
		}
		names[a.Name] = true
		authority, err := compileAuthority(a, path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out.authorities = append(out.authorities, authority)
	}
	return out, errs
}

// compileAuthority parses a key or a keyless identity with its trusted root.
func compileAuthority(a skyhookv1.TrustAuthority, path *field.Path) (*imagesig.Authority, *field.Error) {
	switch {
	case a.Key != nil && a.Keyless == nil:
		authority, err := imagesig.KeyAuthority(a.Name, a.Key.PublicKey)
		if err != nil {
			return nil, field.Invalid(path.Child("key", "publicKey"), "(key)", err.Error())
		}
		return authority, nil
	case a.Keyless != nil && a.Key == nil:
		k := a.Keyless
		authority, err := imagesig.KeylessAuthority(a.Name, []byte(k.TrustedRoot),
			imagesig.Identity{Issuer: k.Issuer, IssuerRegExp: k.IssuerRegExp, Subject: k.Subject, SubjectRegExp: k.SubjectRegExp})
		if err != nil {
			return nil, field.Invalid(path.Child("keyless"), "(trusted root and identity)", err.Error())
		}
		return authority, nil
	default:
		return nil, field.Invalid(path, a.Name, "exactly one of key and keyless must be set")
	}
}

// matches reports whether the policy governs the image (a repository, as
// written and fully qualified).
func (p *policy) matches(names ...string) bool {
	for _, g := range p.patterns {
		for _, n := range names {
			if g.Match(n) {
				return true
			}
		}
	}
	return false
}
