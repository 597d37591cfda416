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
)
