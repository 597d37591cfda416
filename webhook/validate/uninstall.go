package validate

import (
	"fmt"
	"maps"
	"slices"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Recorded reports whether any node still records the named package at the
// given version for the Skyhook: not yet uninstalled there.
type Recorded func(pkg, version string) (bool, error)

// SkyhookUpdate returns what an update of a Skyhook from old to sk breaks
// of explicit uninstall, as NodeWright gates it, and the warnings to give.
// A package that declares uninstall support (uninstall.enabled) may be
// removed, or its version lowered, only once it has been uninstalled
// (uninstall.apply) from every node; cancelling an uninstall warns that
// nodes install it again. recorded may be nil to skip the node lookups
// (the gates then refuse, as they cannot tell).
func SkyhookUpdate(old, sk *skyhookv1.Skyhook, recorded Recorded) (field.ErrorList, []string) {
	var errs field.ErrorList
	var warnings []string
	packages := field.NewPath("spec", "packages")
	for _, name := range slices.Sorted(maps.Keys(old.Spec.Packages)) {
		before := old.Spec.Packages[name]
		after, kept := sk.Spec.Packages[name]
		p := packages.Child(name)
		switch {
		case !kept && before.UninstallEnabled():
			if err := uninstalled(name, before, recorded); err != "" {
				errs = append(errs, field.Forbidden(p, "the package declares uninstall support (uninstall.enabled=true) and "+err+"; set uninstall.apply=true first, wait until it is uninstalled from every node, then remove it"))
			}
		case kept && before.UninstallEnabled() && lowered(before.Version, after.Version):
			if err := uninstalled(name, before, recorded); err != "" {
				errs = append(errs, field.Forbidden(p.Child("version"), fmt.Sprintf("lowering %s to %s: the package declares uninstall support (uninstall.enabled=true) and %s; set uninstall.apply=true first, wait until it is gone from every node, then change the version", before.Version, after.Version, err)))
			}
		case kept && before.Uninstalling() && !after.Uninstalling():
			warnings = append(warnings, fmt.Sprintf("spec.packages.%s.uninstall.apply: the uninstall is cancelled; nodes still uninstalling, or already uninstalled, install the package again (a node already in its uninstall interrupt finishes the uninstall first)", name))
		}
	}
	return errs, warnings
}

// uninstalled says why the package is not uninstalled everywhere, or "".
func uninstalled(name string, pkg skyhookv1.Package, recorded Recorded) string {
	if !pkg.Uninstalling() {
		return "has not been uninstalled (uninstall.apply is false)"
	}
	if recorded == nil {
		return "whether nodes still have it cannot be checked"
	}
	still, err := recorded(name, pkg.Version)
	if err != nil {
		return "whether nodes still have it cannot be checked: " + err.Error()
	}
	if still {
		return "is still being uninstalled from some nodes"
	}
	return ""
}

// lowered reports whether the version went down (semantic versions; ones
// that do not parse are refused elsewhere and never count).
func lowered(before, after string) bool {
	b, err1 := semver.NewVersion(before)
	a, err2 := semver.NewVersion(after)
	return err1 == nil && err2 == nil && a.LessThan(b)
}
