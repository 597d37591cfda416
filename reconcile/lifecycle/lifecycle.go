// Package lifecycle decides, for one package on one node, which stage runs
// next, from the package as declared and what the node records of it. It is
// pure: the reconciler runs the stage and records its outcome.
//
// The stage order (spec, Lifecycle):
//
//	install:   apply   → config → interrupt → post-interrupt
//	upgrade:   upgrade → config → interrupt → post-interrupt
//	downgrade: uninstall (old version) → install
//	removal:   uninstall (old version), then the record is forgotten
//	configMap changed (same version, done): config → …
//
// interrupt and post-interrupt only run for a package that asks for an
// interrupt; cordon, drain and reboot verification around them are the
// interrupt path's (see the reconciler).
package lifecycle

import (
	"sort"

	"github.com/Masterminds/semver/v3"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Action is what the reconciler does for a package on a node.
type Action int

const (
	// Done: the declared version has completed its last stage.
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
	// uninstall the one recorded when the old version was installed.
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
	// Old versions go first: an uninstall in progress or due.
	for _, old := range others {
		if old.Stage == skyhookv1.StageUninstall && old.State == skyhookv1.StateComplete {
			return Step{Action: Forget, Version: old.Version, Image: old.Image}
		}
		if declared == nil || old.Stage == skyhookv1.StageUninstall || downgrade(old.Version, declared.Version) {
			return Step{Action: Run, Stage: skyhookv1.StageUninstall, Version: old.Version, Image: old.Image}
		}
	}
	if declared == nil {
		return Step{Action: Done}
	}
	run := func(stage skyhookv1.Stage) Step {
		return Step{Action: Run, Stage: stage, Version: declared.Version, Image: declared.Image}
	}
	if current == nil {
		if len(others) > 0 { // an older version is installed: upgrade it
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
