package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// DeploymentPolicy is the rollout policy NodeWrights name in
// spec.deploymentPolicy: compartments of nodes, each with its budget and
// batch strategy. The same as the skyhook.nvidia.com DeploymentPolicy,
// in NodeWright's group.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type DeploymentPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the default and the compartments.
	// +required
	Spec skyhookv1.DeploymentPolicySpec `json:"spec"`

	// Status is written by the operator.
	// +optional
	Status skyhookv1.DeploymentPolicyStatus `json:"status,omitempty"`
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
