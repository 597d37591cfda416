package trust

import (
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Packages are the packages of sk to check, each with the digest to verify
// when there is one to keep:
//   - a containerSHA the writer set (on create, or changed by the update)
//     is verified as given;
//   - on an update that keeps a package's image and version, the digest
//     pinned before is kept, not verified again (Kept), whether or not the
//     writer's copy still carries it: a re-apply of a manifest without
//     containerSHA, the operator's own updates of the object, or a moved
//     tag change nothing and need no registry, even one that is down;
//   - a new image or version resolves its tag afresh, even if the stored
//     containerSHA came along with the update (kubectl apply keeps fields
//     its manifest never set), so a version bump never runs the old digest.
func Packages(sk, old *skyhookv1.Skyhook) []Package {
	out := make([]Package, 0, len(sk.Spec.Packages))
	for key, pkg := range sk.Spec.Packages {
		p := Package{Key: key, Image: pkg.Image, Version: pkg.Version}
		var before skyhookv1.Package
		existed := false
		if old != nil {
			before, existed = old.Spec.Packages[key]
		}
		sameImage := existed && before.Image == pkg.Image && before.Version == pkg.Version
		switch {
		case pkg.ContainerSHA != "" && (!existed || pkg.ContainerSHA != before.ContainerSHA):
			p.Digest = pkg.ContainerSHA
		case sameImage && before.ContainerSHA != "":
			p.Digest, p.Kept = before.ContainerSHA, true
		}
		out = append(out, p)
	}
	return out
}
