package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// NodeDisruptionBudgetKind is the kind name of NodeDisruptionBudget objects.
const NodeDisruptionBudgetKind = "NodeDisruptionBudget"

// NodeDisruptionBudgetSpec caps the nodes out of service at once across
// every rollout, Skyhook and NodeWright, on the nodes it selects: a node is
// out of service from its cordon (or the first stage that interrupts,
// drains or taints it) to its uncordon. Each rollout's own budget and its
// DeploymentPolicy still apply: a node starts only when all of them allow
// it. Several budgets may select a node; every one that is active must
// allow it, so the most restrictive wins.
type NodeDisruptionBudgetSpec struct {
	// NodeSelector selects the nodes the budget counts; empty selects
	// every node.
	// +optional
	NodeSelector metav1.LabelSelector `json:"nodeSelector,omitempty"`

	// MaxUnavailable is how many of the selected nodes may be out of
	// service at once: a count, or a percent string of the selected nodes
	// ("10%", rounded up, as a PodDisruptionBudget's).
	// +kubebuilder:validation:XIntOrString
	// +required
	MaxUnavailable intstr.IntOrString `json:"maxUnavailable"`

	// Topology caps the nodes out of service per failure domain, and how
	// many domains may be disrupted at once.
	// +optional
	Topology *DisruptionTopology `json:"topology,omitempty"`

	// Windows, when set, are the only times the budget applies (Karpenter's
	// schedule and duration); outside them it caps nothing. Empty: always.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Windows []DisruptionWindow `json:"windows,omitempty"`

	// CountNonInterruptingStages counts a node as out of service while any
	// stage of a rollout runs on it, not only from its cordon to its
	// uncordon.
	// +optional
	CountNonInterruptingStages bool `json:"countNonInterruptingStages,omitempty"`
}

// DisruptionTopology caps disruption by failure domain: the nodes' value of
// a label (a zone, a rack, an NVLink domain such as nvidia.com/gpu.clique).
type DisruptionTopology struct {
	// Key is the label whose value names a node's domain. Nodes without it
	// are in no domain: only the budget's own cap counts them.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +required
	Key string `json:"key"`

	// MaxUnavailablePerDomain is how many nodes of one domain may be out
	// of service at once: a count, or a percent of the domain's selected
	// nodes (rounded up).
	// +kubebuilder:validation:XIntOrString
	// +optional
	MaxUnavailablePerDomain *intstr.IntOrString `json:"maxUnavailablePerDomain,omitempty"`

	// MaxDisruptedDomains is how many domains may have a node out of
	// service at once.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxDisruptedDomains *int32 `json:"maxDisruptedDomains,omitempty"`
}

// DisruptionWindow is a time the budget applies: from each time the cron
// schedule names, for the duration.
type DisruptionWindow struct {
	// Schedule is a cron expression of five fields (minute hour
	// day-of-month month day-of-week), or a descriptor such as @daily, in
	// UTC.
	// +kubebuilder:validation:MinLength=1
	// +required
	Schedule string `json:"schedule"`

	// Duration is how long each window lasts from its start.
	// +required
	Duration metav1.Duration `json:"duration"`
}

// NodeDisruptionBudgetStatus is what the budget counts now.
type NodeDisruptionBudgetStatus struct {
	// ObservedGeneration is the generation last counted.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready (the budget is valid and counted) and Active
	// (inside one of its windows, or it has none).
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Selected is how many nodes the budget selects.
	// +optional
	Selected int32 `json:"selected"`

	// Allowed is how many of them may be out of service at once now (the
	// selected count while the budget is not active).
	// +optional
	Allowed int32 `json:"allowed"`

	// Disrupted is how many of them are out of service.
	// +optional
	Disrupted int32 `json:"disrupted"`

	// Rollouts are the nodes out of service, by the rollout that took them.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Rollouts []DisruptionByRollout `json:"rollouts,omitempty"`

	// Domains are the domains with a node out of service, when the budget
	// has a topology.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Domains []DisruptionByDomain `json:"domains,omitempty"`
}

// DisruptionByRollout is the nodes out of service that one rollout took.
type DisruptionByRollout struct {
	// Kind is Skyhook or NodeWright.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Nodes are the first nodes by name (at most 64), Count all of them.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Nodes []string `json:"nodes,omitempty"`
	Count int32    `json:"count"`
}

// DisruptionByDomain is how many nodes of one domain are out of service.
type DisruptionByDomain struct {
	Domain    string `json:"domain"`
	Disrupted int32  `json:"disrupted"`
	Allowed   int32  `json:"allowed"`
}

// NodeDisruptionBudget caps the nodes out of service at once across every
// Skyhook and NodeWright rollout.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=ndb,categories={skyhook-all}
// +kubebuilder:printcolumn:name="Max",type=string,JSONPath=`.spec.maxUnavailable`
// +kubebuilder:printcolumn:name="Selected",type=integer,JSONPath=`.status.selected`
// +kubebuilder:printcolumn:name="Allowed",type=integer,JSONPath=`.status.allowed`
// +kubebuilder:printcolumn:name="Disrupted",type=integer,JSONPath=`.status.disrupted`
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.conditions[?(@.type=="Active")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NodeDisruptionBudget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   NodeDisruptionBudgetSpec   `json:"spec,omitempty"`
	Status NodeDisruptionBudgetStatus `json:"status,omitempty"`
}

// NodeDisruptionBudgetList is a list of NodeDisruptionBudgets.
// +kubebuilder:object:root=true
type NodeDisruptionBudgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeDisruptionBudget `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodeDisruptionBudget{}, &NodeDisruptionBudgetList{})
}
