package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/runtime/conditions"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Explicit uninstall in the status: the nodes where packages are being
// uninstalled, and the packages held by a dependency being uninstalled,
// with NodeWright's condition types and reasons. (What runs is
// reconcile/lifecycle's; deleting a Skyhook is the reconciler's.)

// CountUninstalls reports whether a declared package of the node's record
// is in its uninstall (or uninstall interrupt), and whether that fails.
func CountUninstalls(sk *skyhookv1.Skyhook, state skyhookv1.NodeState) (uninstalling, failing bool) {
	for _, e := range state {
		d, declared := sk.Spec.Packages[e.Name]
		if !declared || d.Version != e.Version || (e.Stage != skyhookv1.StageUninstall && e.Stage != skyhookv1.StageUninstallInterrupt) {
			continue
		}
		uninstalling = true
		failing = failing || e.State == skyhookv1.StateErroring
	}
	return uninstalling, failing
}

// reportUninstalls sets UninstallInProgress and UninstallFailed, with
// NodeWright's reasons, while nodes uninstall packages.
func reportUninstalls(sk *skyhookv1.Skyhook, uninstalling, failing int) {
	if uninstalling == 0 {
		conditions.Delete(sk, skyhookv1.UninstallInProgressCondition)
	} else {
		conditions.MarkTrue(sk, skyhookv1.UninstallInProgressCondition, "UninstallInProgress", "packages are being uninstalled on %d nodes", uninstalling)
	}
	if failing == 0 {
		conditions.Delete(sk, skyhookv1.UninstallFailedCondition)
	} else {
		conditions.MarkTrue(sk, skyhookv1.UninstallFailedCondition, "UninstallPodFailing", "the uninstall fails on %d nodes", failing)
	}
}

// reportDependencies sets Blocked while a package depends on one that is
// being uninstalled: it does not start until the dependency is installed
// again or dropped from its dependsOn.
func reportDependencies(sk *skyhookv1.Skyhook) {
	var msgs []string
	for _, name := range slices.Sorted(maps.Keys(sk.Spec.Packages)) {
		for _, dep := range slices.Sorted(maps.Keys(sk.Spec.Packages[name].DependsOn)) {
			if d, ok := sk.Spec.Packages[dep]; ok && d.Uninstalling() {
				msgs = append(msgs, fmt.Sprintf("package %s depends on %s, which is being uninstalled", name, dep))
			}
		}
	}
	if len(msgs) == 0 {
		if conditions.GetReason(sk, skyhookv1.BlockedCondition) == "DependencyUninstalled" {
			conditions.Delete(sk, skyhookv1.BlockedCondition) // a NonInterruptPodsRunning one is reportDrains'
		}
		return
	}
	conditions.MarkTrue(sk, skyhookv1.BlockedCondition, "DependencyUninstalled", "%s", strings.Join(msgs, "; "))
}
