package v1alpha1

// Condition types and reasons that Skyhook adds to Flux's Ready, Reconciling
// and Stalled (github.com/fluxcd/pkg/apis/meta holds those).
const (
	// NodesBlockedCondition is True while selected nodes cannot be worked on:
	// ignored, untolerated taints, or held by a higher-priority Skyhook.
	NodesBlockedCondition = "NodesBlocked"

	// DrainBlockedCondition is True while a drain cannot finish; its message
	// names the pods and why (PodDisruptionBudget, non-interrupt label, ...).
	DrainBlockedCondition = "DrainBlocked"

	// RolloutHaltedCondition is True when a DeploymentPolicy's failureThreshold
	// stopped the rollout.
	RolloutHaltedCondition = "RolloutHalted"

	// InterruptWindowClosedCondition is True while nodes wait at their
	// interrupt for the DeploymentPolicy's interrupt window; its message
	// says when the window opens next.
	InterruptWindowClosedCondition = "InterruptWindowClosed"

	// FleetBudgetHeldCondition is True while waiting nodes are held back
	// by a NodeDisruptionBudget; its message names the budget, the domain,
	// the slots taken of those allowed and by which rollouts.
	FleetBudgetHeldCondition = "FleetBudgetHeld"

	// WaitingForWorkloadsCondition is True while nodes have given their
	// budget slot back to workloads that must not be interrupted
	// (drain.onTimeout Yield); its message says how many and since when.
	WaitingForWorkloadsCondition = "WaitingForWorkloads"
)

// Condition types of explicit uninstall, named as NodeWright names them.
const (
	// UninstallInProgressCondition is True while a package is being
	// uninstalled from a node (its uninstall or uninstall interrupt runs).
	UninstallInProgressCondition = "UninstallInProgress"

	// UninstallFailedCondition is True while an uninstall is failing on a
	// node.
	UninstallFailedCondition = "UninstallFailed"

	// BlockedCondition is True while a package cannot run because a
	// package it depends on is being uninstalled.
	BlockedCondition = "Blocked"

	// DeletionBlockedCondition is True while a deleted Skyhook cannot
	// uninstall its packages; its reason says why (MalformedNodeState,
	// PausedWithPendingUninstall, DisabledWithPendingUninstall).
	DeletionBlockedCondition = "DeletionBlocked"

	// NodeStateMalformedCondition is True while selected nodes hold a record
	// of the Skyhook (nodeState_<skyhook>) that cannot be read; those nodes
	// are held until it is repaired or reset.
	NodeStateMalformedCondition = "NodeStateMalformed"
)

// Condition types and reasons NodeWright writes, mirrored for its readers.
const (
	// PrefixedReadyCondition is Ready with NodeWright's reasons.
	PrefixedReadyCondition = MetadataPrefix + "/Ready"
	// TransitionCondition's reason is the summary status.
	TransitionCondition = MetadataPrefix + "/Transition"
	// TaintNotTolerableCondition is True while selected nodes have taints
	// the Skyhook does not tolerate.
	TaintNotTolerableCondition = "TaintNotTolerable"
	// NodesIgnoredCondition is True while selected nodes carry the ignore
	// label.
	NodesIgnoredCondition = "NodesIgnored"
	// ApplyPackageCondition names the last package a stage was started for.
	ApplyPackageCondition = "ApplyPackage"
	// NodesConvergedReason is Ready's reason once every node is complete.
	NodesConvergedReason = "NodesConverged"
)
