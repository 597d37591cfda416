package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeploymentPolicyKind is the kind name of DeploymentPolicy objects.
const DeploymentPolicyKind = "DeploymentPolicy"

// DefaultCompartmentName is the reserved name of the compartment holding the
// nodes that no declared compartment selects.
const DefaultCompartmentName = "__default__"

// DeploymentPolicySpec splits the nodes of the Skyhooks that use the policy
// into compartments, each with a budget and a strategy for growing batches.
type DeploymentPolicySpec struct {
	// Default applies to nodes that no compartment selects.
	// +required
	Default PolicyDefault `json:"default"`

	// Compartments are groups of nodes with their own budget and strategy. A
	// node in several compartments belongs to the most specific one (the
	// selector with the most requirements; ties by name), so the choice is
	// deterministic.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	// +optional
	Compartments []Compartment `json:"compartments,omitempty"`

	// ResetBatchStateOnCompletion starts batch sizing over once a rollout
	// completes, so the next rollout begins with initialBatch again.
	// +kubebuilder:default=true
	// +optional
	ResetBatchStateOnCompletion *bool `json:"resetBatchStateOnCompletion,omitempty"`

	// InterruptWindow, when set, is the only time a node of a Skyhook using
	// this policy starts an interrupt (cordon, drain, reboot or restarts).
	// Outside it, stages that disturb nothing still run and nodes wait at
	// their interrupt; the rollout goes on when the window opens. Beyond the
	// reference system.
	// +optional
	InterruptWindow *InterruptWindow `json:"interruptWindow,omitempty"`
}

// InterruptWindow is a weekly window: on the given days, from start to end
// (a window whose end is not after its start runs over midnight), in a time
// zone.
type InterruptWindow struct {
	// Days the window opens on; every day when empty.
	// +kubebuilder:validation:MaxItems=7
	// +kubebuilder:validation:items:Enum=Mon;Tue;Wed;Thu;Fri;Sat;Sun
	// +optional
	Days []string `json:"days,omitempty"`

	// Start is the time of day the window opens, HH:MM.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// +required
	Start string `json:"start"`

	// End is the time of day the window closes, HH:MM.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// +required
	End string `json:"end"`

	// TimeZone is an IANA time zone such as Europe/Berlin; UTC when empty.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
}

// PolicyDefault is the budget and strategy for nodes outside every compartment.
type PolicyDefault struct {
	// Budget caps the nodes worked on at once.
	// +required
	Budget DeploymentBudget `json:"budget"`

	// Strategy sizes the batches; fixed when unset.
	// +optional
	Strategy *DeploymentStrategy `json:"strategy,omitempty"`
}

// Compartment is a named group of nodes with its own budget and strategy.
type Compartment struct {
	// Name of the compartment, unique in the policy.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`

	// Selector selects the nodes of the compartment.
	// +required
	Selector metav1.LabelSelector `json:"selector"`

	// Budget caps the nodes of this compartment worked on at once.
	// +required
	Budget DeploymentBudget `json:"budget"`

	// Strategy sizes the batches; fixed when unset.
	// +optional
	Strategy *DeploymentStrategy `json:"strategy,omitempty"`
}

// DeploymentBudget is a hard cap on nodes in progress or interrupted at once:
// exactly one of percent (of the compartment's nodes, rounded down, at least
// one) or count.
//
// +kubebuilder:validation:XValidation:rule="has(self.percent) != has(self.count)",message="set exactly one of percent and count"
type DeploymentBudget struct {
	// Percent of the compartment's nodes.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Percent *int32 `json:"percent,omitempty"`

	// Count of nodes.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Count *int32 `json:"count,omitempty"`
}

// DeploymentStrategy sizes successive batches; exactly one variant is set.
//
// +kubebuilder:validation:XValidation:rule="[has(self.fixed), has(self.linear), has(self.exponential)].exists_one(set, set)",message="set exactly one of fixed, linear and exponential"
type DeploymentStrategy struct {
	// Fixed keeps every batch at initialBatch nodes.
	// +optional
	Fixed *FixedStrategy `json:"fixed,omitempty"`

	// Linear grows each successful batch by delta nodes.
	// +optional
	Linear *LinearStrategy `json:"linear,omitempty"`

	// Exponential multiplies each successful batch by growthFactor.
	// +optional
	Exponential *ExponentialStrategy `json:"exponential,omitempty"`
}

// BatchSettings are the settings every strategy shares. Batches never exceed
// the compartment's budget.
type BatchSettings struct {
	// InitialBatch is the size of the first batch.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	InitialBatch *int32 `json:"initialBatch,omitempty"`

	// BatchThreshold is the percentage of a batch's nodes that must succeed
	// for the batch to count as successful.
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	BatchThreshold *int32 `json:"batchThreshold,omitempty"`

	// FailureThreshold is the number of consecutive failed batches after
	// which the compartment's rollout halts (the RolloutHalted condition)
	// until the Skyhook's spec changes. Unset never halts.
	// +kubebuilder:validation:Minimum=1
	// +optional
	FailureThreshold *int32 `json:"failureThreshold,omitempty"`

	// SafetyLimit is a percentage of the compartment's nodes. While fewer
	// of them are complete, a failed batch shrinks the next one (linear by
	// delta, exponential by growthFactor, at least one node) and counts
	// toward failureThreshold; from then on failures neither shrink batches
	// nor halt the rollout.
	// +kubebuilder:default=50
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	SafetyLimit *int32 `json:"safetyLimit,omitempty"`
}

// FixedStrategy keeps batches at a constant size.
type FixedStrategy struct {
	BatchSettings `json:",inline"`
}

// LinearStrategy grows batches by a constant number of nodes.
type LinearStrategy struct {
	BatchSettings `json:",inline"`

	// Delta is added to the batch size after each successful batch.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	Delta *int32 `json:"delta,omitempty"`
}

// ExponentialStrategy grows batches by a constant factor.
type ExponentialStrategy struct {
	BatchSettings `json:",inline"`

	// GrowthFactor multiplies the batch size after each successful batch.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=2
	// +optional
	GrowthFactor *int32 `json:"growthFactor,omitempty"`
}

// DeploymentPolicyStatus is the observed state of a DeploymentPolicy.
type DeploymentPolicyStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions of the policy.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DeploymentPolicy groups nodes into compartments and caps how many nodes of
// each are worked on at once, with a strategy for growing batches.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={skyhook-all}
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type DeploymentPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the default and the compartments.
	// +required
	Spec DeploymentPolicySpec `json:"spec"`

	// Status is written by the operator.
	// +optional
	Status DeploymentPolicyStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions (conditions.Getter).
func (in *DeploymentPolicy) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the status conditions (conditions.Setter).
func (in *DeploymentPolicy) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// DeploymentPolicyList is a list of DeploymentPolicies.
//
// +kubebuilder:object:root=true
type DeploymentPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the DeploymentPolicies.
	Items []DeploymentPolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&DeploymentPolicy{}, &DeploymentPolicyList{})
}
