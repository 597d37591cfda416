// Package lifecycle decides, for one package on one node, which stage runs
// next, from the package as declared and what the node records of it. It is
// pure: the reconciler runs the stage and records its outcome.
//
// The stage order (spec, Lifecycle), as NodeWright's newest operator has it:
//
//	install:   apply   → config → interrupt → post-interrupt
//	upgrade:   upgrade → config → interrupt → post-interrupt
//	uninstall: uninstall → uninstall-interrupt, then the record is forgotten
//	           (only with uninstall.enabled and uninstall.apply)
//	configMap changed (same version, done): config → …
//
// Lowering a version installs the new one beside the old record, and
// removing a package from the Skyhook leaves its record: without an
// explicit uninstall nothing ran the package's uninstall steps, and the
// record says its files may still be on the host.
//
// interrupt, post-interrupt and uninstall-interrupt only run for a package
// that asks for an interrupt; cordon, drain and reboot verification around
// them are the interrupt path's (see the reconciler).
package lifecycle

import (
	"sort"

	"github.com/Masterminds/semver/v3"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Action is what the reconciler does for a package on a node.
type Action int

const (
	// Done: nothing to do: the declared version has completed its last
	// stage, or it is uninstalled as asked.
	Done Action = iota
	// Run: run Stage for Version (start it, or follow the running one).
	Run
	// Forget: an uninstall finished; drop the record of Version.
	Forget
)

// Step is the decision for one package on one node.
type Step struct {
	Action  Action
	Stage   skyhookv1.Stage
	Version string
	// Image is the image the stage runs from: the declared one, or for an
	// uninstall finishing under an older version the recorded one.
	Image string
}

// Next decides the step for package name on a node. declared is the package
// in the Skyhook, nil when it was removed; recorded are the node's entries
// for this package name (any versions); configChanged says the package's
// configMap differs from the one its config stage last ran with; interrupt
// says the interrupt stages follow the config stage in this run (the
// package's interrupt after an install or upgrade; after a rerun for a
// changed configMap, only what its configInterrupts ask for).
func Next(declared *skyhookv1.Package, recorded []skyhookv1.PackageStatus, configChanged, interrupt bool) Step {
	sort.Slice(recorded, func(i, j int) bool { return recorded[i].Version < recorded[j].Version })
	var current *skyhookv1.PackageStatus
	var others []skyhookv1.PackageStatus
	for i := range recorded {
		if declared != nil && recorded[i].Version == declared.Version {
			current = &recorded[i]
		} else {
			others = append(others, recorded[i])
		}
	}
	// A finished uninstall of another version is forgotten; any other
	// record of another version stays as the marker it is.
	for _, old := range others {
		if uninstalled(old, false) {
			return Step{Action: Forget, Version: old.Version, Image: old.Image}
		}
	}
	if declared == nil {
		return Step{Action: Done}
	}
	run := func(stage skyhookv1.Stage) Step {
		return Step{Action: Run, Stage: stage, Version: declared.Version, Image: declared.Image}
	}
	if current != nil && IsUninstall(current.Stage) {
		return uninstallStep(declared, current, run)
	}
	if declared.Uninstalling() {
		switch {
		case current == nil:
			return Step{Action: Done, Stage: skyhookv1.StageUninstall, Version: declared.Version, Image: declared.Image}
		case current.State == skyhookv1.StateInProgress:
			return run(current.Stage) // the running stage (or interrupt) finishes first
		}
		return run(skyhookv1.StageUninstall)
	}
	if current == nil {
		if upgradeFrom(others, declared.Version) {
			return run(skyhookv1.StageUpgrade)
		}
		return run(skyhookv1.StageApply)
	}
	if current.State != skyhookv1.StateComplete && current.State != skyhookv1.StateSkipped {
		return run(current.Stage)
	}
	if next, ok := after(current.Stage, interrupt); ok {
		return run(next)
	}
	if configChanged {
		return run(skyhookv1.StageConfig)
	}
	return Step{Action: Done, Stage: current.Stage, Version: declared.Version, Image: declared.Image}
}

// uninstallStep follows an uninstall recorded for the declared version:
// on to the uninstall interrupt (for a package with an interrupt), then
// forgotten. Cancelled (uninstall.apply false) before its interrupt, the
// package installs again; once the interrupt began, it runs to the end.
func uninstallStep(declared *skyhookv1.Package, current *skyhookv1.PackageStatus, run func(skyhookv1.Stage) Step) Step {
	withInterrupt := declared.Interrupt != nil
	if uninstalled(*current, withInterrupt) {
		return Step{Action: Forget, Version: current.Version, Image: current.Image}
	}
	if current.Stage == skyhookv1.StageUninstallInterrupt {
		return run(skyhookv1.StageUninstallInterrupt)
	}
	if !declared.Uninstalling() {
		return run(skyhookv1.StageApply)
	}
	if current.State == skyhookv1.StateComplete {
		return run(skyhookv1.StageUninstallInterrupt)
	}
	return run(skyhookv1.StageUninstall)
}

// uninstalled reports whether a record is a finished uninstall: its
// uninstall interrupt complete, or its uninstall complete and no interrupt
// due after it.
func uninstalled(e skyhookv1.PackageStatus, withInterrupt bool) bool {
	if e.State != skyhookv1.StateComplete {
		return false
	}
	return e.Stage == skyhookv1.StageUninstallInterrupt || (e.Stage == skyhookv1.StageUninstall && !withInterrupt)
}

// upgradeFrom reports whether a recorded other version is below the
// declared one, so the declared version upgrades it; otherwise (nothing
// recorded, or only higher versions left as markers after a downgrade) it
// is applied.
func upgradeFrom(others []skyhookv1.PackageStatus, version string) bool {
	for _, old := range others {
		if downgrade(version, old.Version) {
			return true
		}
	}
	return false
}

// after is the stage that follows a completed one, and false after the last.
func after(stage skyhookv1.Stage, interrupt bool) (skyhookv1.Stage, bool) {
	switch stage {
	case skyhookv1.StageApply, skyhookv1.StageUpgrade:
		return skyhookv1.StageConfig, true
	case skyhookv1.StageConfig:
		if interrupt {
			return skyhookv1.StageInterrupt, true
		}
	case skyhookv1.StageInterrupt:
		return skyhookv1.StagePostInterrupt, true
	}
	return "", false
}

// downgrade reports whether going from old to declared lowers the version.
// Versions that do not parse (admission refuses them) never count as one.
func downgrade(old, declared string) bool {
	o, err1 := semver.NewVersion(old)
	d, err2 := semver.NewVersion(declared)
	return err1 == nil && err2 == nil && d.LessThan(o)
}

// IsInterrupt reports whether a stage is an interrupt (of an install or
// upgrade, or of an uninstall): the reconciler runs those merged, once for
// every package due one on the node.
func IsInterrupt(stage skyhookv1.Stage) bool {
	return stage == skyhookv1.StageInterrupt || stage == skyhookv1.StageUninstallInterrupt
}

// IsUninstall reports whether a stage is part of an uninstall: the
// uninstall or its interrupt.
func IsUninstall(stage skyhookv1.Stage) bool {
	return stage == skyhookv1.StageUninstall || stage == skyhookv1.StageUninstallInterrupt
}

// Order is a stage's place in a version's lifecycle: a record at a later
// stage has passed every earlier one. Uninstall stands apart (it is recorded
// under the old version) and orders first.
func Order(stage skyhookv1.Stage) int {
	switch stage {
	case skyhookv1.StageApply, skyhookv1.StageUpgrade:
		return 1
	case skyhookv1.StageConfig:
		return 2
	case skyhookv1.StageInterrupt:
		return 3
	case skyhookv1.StagePostInterrupt:
		return 4
	}
	return 0
}
