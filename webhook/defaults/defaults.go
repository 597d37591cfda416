// Package defaults fills in what a Skyhook or DeploymentPolicy leaves out,
// so that the stored object is what runs. The mutating webhook calls it; it
// never changes something the validator must still judge, except an image
// tag that disagrees with the version: as NodeWright does, the version wins
// and the tag is dropped, with a warning that says what will run.
package defaults

import (
	"fmt"

	"k8s.io/utils/ptr"

	"github.com/skyhook-go/skyhook/api/imageref"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/webhook/validate"
)

// The strategy defaults; the CRD schema carries the same values, so objects
// written before the webhook existed read the same.
const (
	InitialBatch   int32 = 1
	BatchThreshold int32 = 100
	SafetyLimit    int32 = 50
	Delta          int32 = 1
	GrowthFactor   int32 = 2
)

// Options are operator-wide defaults set at start-up.
type Options struct {
	// Resources are given to packages that set none.
	Resources *skyhookv1.ResourceRequirements
}

// Skyhook fills in the defaults of sk. Not priority: the CRD schema gives an
// absent one its default before admission, so a 0 here was written and is
// for the validator to refuse, as upstream's schema does.
//
// It returns the admission warnings for what it changed that the writer may
// not expect: a dropped image tag.
func Skyhook(sk *skyhookv1.Skyhook, opts Options) []string {
	return packages(sk, opts, true)
}

// NodeWright fills in the defaults of a NodeWright's view: as a Skyhook's,
// but its images are left as written: NodeWright v0.20 refuses a tag or a
// digest in one (validate.NodeWright), rather than moving it out.
func NodeWright(nw *skyhookv1.Skyhook, opts Options) []string {
	return packages(nw, opts, false)
}

// packages fills in the packages' names and resources, and with split
// moves tags and digests out of their images.
func packages(sk *skyhookv1.Skyhook, opts Options, split bool) []string {
	var warnings []string
	for key, pkg := range sk.Spec.Packages {
		if !validate.PackageName.MatchString(key) {
			continue // refused by validation; nothing to default
		}
		if pkg.Name == "" {
			pkg.Name = key
		}
		if split {
			if w := splitImage(&pkg); w != "" {
				warnings = append(warnings, fmt.Sprintf("spec.packages.%s.image: %s", key, w))
			}
		}
		if pkg.Resources == nil && opts.Resources != nil {
			pkg.Resources = opts.Resources.DeepCopy()
		}
		sk.Spec.Packages[key] = pkg
	}
	return warnings
}

// splitImage moves the tag and a digest out of the image: the image becomes
// the repository, the digest goes to containerSHA. A tag that disagrees
// with the version is dropped too, and the returned warning says which
// image runs instead. A digest that disagrees with containerSHA, and an
// invalid version, are left as written for the validator.
func splitImage(pkg *skyhookv1.Package) string {
	ref, err := imageref.Parse(pkg.Image)
	if err != nil || (ref.Tag == "" && ref.Digest == "") {
		return ""
	}
	version, errs := validate.Version(pkg.Version, nil)
	if len(errs) > 0 {
		return ""
	}
	if ref.Digest != "" {
		if pkg.ContainerSHA != "" && !validate.SameDigest(pkg.ContainerSHA, ref.Digest) {
			return ""
		}
		pkg.ContainerSHA = ref.Digest
	}
	pkg.Image = ref.Repository
	if ref.Tag == "" || validate.SameVersion(ref.Tag, version) {
		return ""
	}
	runs := ref.Repository + ":" + pkg.Version
	if pkg.ContainerSHA != "" {
		runs = ref.Repository + "@" + pkg.ContainerSHA
	}
	return fmt.Sprintf("the tag %q disagrees with version %q; the version wins and %s runs", ref.Tag, pkg.Version, runs)
}

// DeploymentPolicy fills in the defaults of dp.
func DeploymentPolicy(dp *skyhookv1.DeploymentPolicy) {
	if dp.Spec.ResetBatchStateOnCompletion == nil {
		dp.Spec.ResetBatchStateOnCompletion = ptr.To(true)
	}
	strategy(dp.Spec.Default.Strategy)
	for i := range dp.Spec.Compartments {
		strategy(dp.Spec.Compartments[i].Strategy)
	}
}

func strategy(s *skyhookv1.DeploymentStrategy) {
	if s == nil {
		return
	}
	if s.Fixed != nil {
		batch(&s.Fixed.BatchSettings)
	}
	if s.Linear != nil {
		batch(&s.Linear.BatchSettings)
		orDefault(&s.Linear.Delta, Delta)
	}
	if s.Exponential != nil {
		batch(&s.Exponential.BatchSettings)
		orDefault(&s.Exponential.GrowthFactor, GrowthFactor)
	}
}

func batch(b *skyhookv1.BatchSettings) {
	orDefault(&b.InitialBatch, InitialBatch)
	orDefault(&b.BatchThreshold, BatchThreshold)
	orDefault(&b.SafetyLimit, SafetyLimit)
}

func orDefault(p **int32, v int32) {
	if *p == nil {
		*p = ptr.To(v)
	}
}
