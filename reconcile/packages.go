package reconcile

import (
	"sort"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// The lifecycle of a Skyhook's packages on one node, read from the node's
// record: which packages there are, in which order they run, and what each
// does next (lifecycle.Next, with the config and interrupt rules of this
// operator).

// declared is the package as the Skyhook declares it, nil when removed.
func declared(sk *skyhookv1.Skyhook, name string) *skyhookv1.Package {
	p, ok := sk.Spec.Packages[name]
	if !ok {
		return nil
	}
	return &p
}

// recorded are the node's entries for a package, any version.
func recorded(state skyhookv1.NodeState, name string) []skyhookv1.PackageStatus {
	var out []skyhookv1.PackageStatus
	for _, e := range state {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// packageNames are the declared packages and the recorded ones (removed
// packages still to uninstall), sorted.
func packageNames(sk *skyhookv1.Skyhook, state skyhookv1.NodeState) []string {
	seen := map[string]bool{}
	for name := range sk.Spec.Packages {
		seen[name] = true
	}
	for _, e := range state {
		seen[e.Name] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// dependencyOrder lists the packages so that each comes after the packages
// it depends on (admission refuses cycles), ties by name.
func dependencyOrder(sk *skyhookv1.Skyhook, state skyhookv1.NodeState) []string {
	names := packageNames(sk, state)
	placed := map[string]bool{}
	var out []string
	var place func(string)
	place = func(n string) {
		if placed[n] {
			return
		}
		placed[n] = true
		deps := make([]string, 0, len(sk.Spec.Packages[n].DependsOn))
		for d := range sk.Spec.Packages[n].DependsOn {
			deps = append(deps, d)
		}
		sort.Strings(deps)
		for _, d := range deps {
			place(d)
		}
		out = append(out, n)
	}
	for _, n := range names {
		place(n)
	}
	return out
}

// dependenciesDone reports whether every package name depends on is done on
// the node in this pass, and installed: one being uninstalled holds the
// packages that depend on it (the Blocked condition says so).
func dependenciesDone(sk *skyhookv1.Skyhook, name string, done map[string]bool) bool {
	for dep := range sk.Spec.Packages[name].DependsOn {
		if !done[dep] || declared(sk, dep).Uninstalling() {
			return false
		}
	}
	return true
}

// configChanged reports whether the package's configMap differs from the one
// its config stage last ran with on the node. No record (a node configured
// before hashes were kept) counts as unchanged.
func configChanged(sk *skyhookv1.Skyhook, name string, config map[string]string) bool {
	pkg, declared := sk.Spec.Packages[name]
	last, recorded := config[name]
	return declared && recorded && last != stagepod.ConfigHash(pkg.ConfigMap)
}

// rerunKey is the entry of a node's config map (next to the package's
// configMap hash) that marks a config stage rerun for a changed configMap:
// its value is the interrupt the changed keys ask for through the package's
// configInterrupts, as JSON, or empty for none. One with an interrupt
// stays until the package is done; an empty one stays until the next rerun,
// install or upgrade, since the record it leaves at config would otherwise
// read as an install's with the package's own interrupt still due. Package
// names cannot hold '/', so it never names a package.
func rerunKey(name string) string { return name + "/rerun" }

// installBegins is what an install or upgrade of the package does to the
// node's record as the step starts (nothing for another step): a new
// install runs the package's own interrupt (its rerun marker goes), and an
// upgrade replaces the old version's entry.
func installBegins(state skyhookv1.NodeState, config map[string]string, name string, step lifecycle.Step) {
	if step.Stage != skyhookv1.StageUpgrade && step.Stage != skyhookv1.StageApply {
		return
	}
	delete(config, rerunKey(name))
	if step.Stage != skyhookv1.StageUpgrade {
		return
	}
	key := skyhookv1.NodeStateKey(name, step.Version)
	for k, e := range state {
		if e.Name == name && k != key {
			delete(state, k)
		}
	}
}

// nextStep is lifecycle.Next for a package on a node, with whether its
// interrupt stages are due in this run: after an install or upgrade, the
// package's own interrupt; after a configMap rerun, the configInterrupts of
// the keys that changed.
func nextStep(sk *skyhookv1.Skyhook, name string, state skyhookv1.NodeState, config map[string]string) lifecycle.Step {
	d := declared(sk, name)
	interrupt := d != nil && d.Interrupt != nil
	if marker, rerun := config[rerunKey(name)]; rerun {
		interrupt = marker != ""
	}
	return lifecycle.Next(d, recorded(state, name), configChanged(sk, name, config), interrupt)
}

// nodeStatus summarises the node's record for the status label: erroring
// when a package's stage failed for good, not while one that failed is
// tried again (retrying names their record keys).
func nodeStatus(sk *skyhookv1.Skyhook, state skyhookv1.NodeState, config map[string]string, retrying map[string]bool) skyhookv1.Status {
	if packagesDone(sk, state, config) {
		return skyhookv1.StatusComplete
	}
	for key, e := range state {
		if e.State == skyhookv1.StateErroring && !retrying[key] {
			return skyhookv1.StatusErroring
		}
	}
	return skyhookv1.StatusInProgress
}

// nodeComplete reports whether every package is done on the node.
func nodeComplete(sk *skyhookv1.Skyhook, w *nodeWork) bool {
	return packagesDone(sk, w.state, w.config)
}

// packagesDone reports whether every package, declared or recorded, has
// nothing left to do on the node.
func packagesDone(sk *skyhookv1.Skyhook, state skyhookv1.NodeState, config map[string]string) bool {
	for _, name := range packageNames(sk, state) {
		if nextStep(sk, name, state, config).Action != lifecycle.Done {
			return false
		}
	}
	return true
}
