package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// NodeWright declares packages for the host OS of a set of nodes and how to
// roll them out: a Skyhook of the nodewright.nvidia.com group, whose
// records on the nodes are under nodewright.nvidia.com/.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=".status.status"
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=".spec.priority"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Nodes In-Progress",type=integer,JSONPath=".status.nodesInProgress"
// +kubebuilder:printcolumn:name="Complete Nodes",type=string,JSONPath=".status.completeNodes"
// +kubebuilder:printcolumn:name="Packages",type=string,JSONPath=".status.packageList"
// +kubebuilder:printcolumn:name="Policy",type=string,JSONPath=".spec.deploymentPolicy"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 53",message="metadata.name may have at most 53 characters so that the node label and annotation keys derived from it (nodewright.nvidia.com/nodeState_<name>) stay within 63 characters"
type NodeWright struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec declares the packages and the rollout, as a Skyhook's does; the
	// image of a package carries no tag or digest (the version is its tag,
	// containerSHA its digest), as NodeWright v0.20 requires.
	// +kubebuilder:validation:XValidation:rule="!has(self.packages) || self.packages.all(name, !has(self.packages[name].containerSHA) || self.packages[name].containerSHA.matches('^sha256:[0-9a-f]{64}$'))",message="packages[*].containerSHA must be sha256: and 64 lowercase hex digits"
	// +kubebuilder:validation:XValidation:rule="!has(self.packages) || self.packages.all(name, self.packages[name].image.matches('^\\\\S+$'))",message="packages[*].image must not be empty or hold whitespace"
	// +required
	Spec skyhookv1.SkyhookSpec `json:"spec"`

	// Status is written by the operator.
	// +kubebuilder:default={"observedGeneration":-1}
	// +optional
	Status skyhookv1.SkyhookStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions; it makes NodeWright a
// github.com/fluxcd/pkg/runtime/conditions Getter.
func (in *NodeWright) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the status conditions; it makes NodeWright a
// github.com/fluxcd/pkg/runtime/conditions Setter.
func (in *NodeWright) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// NodeWrightList is a list of NodeWrights.
//
// +kubebuilder:object:root=true
type NodeWrightList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the NodeWrights.
	Items []NodeWright `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodeWright{}, &NodeWrightList{})
}
