package v1alpha1

import (
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PackageSetKind is the kind name of PackageSet objects.
const PackageSetKind = "PackageSet"

// PackageSetSpec points at a Flux source whose artifact holds Skyhook and
// DeploymentPolicy manifests, and says how to apply them.
type PackageSetSpec struct {
	// SourceRef is the Flux GitRepository or OCIRepository to read.
	// +required
	SourceRef SourceReference `json:"sourceRef"`

	// Path is the directory inside the artifact that holds the manifests.
	// Defaults to the artifact's root.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.contains('..')",message="path must not contain '..'"
	// +optional
	Path string `json:"path,omitempty"`

	// Interval is how often the set is reconciled even when nothing changed;
	// 0s is refused (the set would never be reconciled again).
	// A duration the pattern allows but Go cannot hold (over 2562047h) is
	// refused: stored, it would make every PackageSet unreadable to the
	// operator.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') || duration(self) >= duration('0s')",message="must be at most 2562047h, the longest duration the operator can hold"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^(0+([.]0+)?(ms|s|m|h))+$')",message="must be more than 0s: a PackageSet is reconciled again every interval"
	// +required
	Interval metav1.Duration `json:"interval"`

	// RetryInterval is the wait before retrying a failed reconcile. Defaults
	// to interval.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') || duration(self) >= duration('0s')",message="must be at most 2562047h, the longest duration the operator can hold"
	// +optional
	RetryInterval *metav1.Duration `json:"retryInterval,omitempty"`

	// Timeout bounds one reconcile: fetch, validation, apply and, with wait,
	// the wait for the Skyhooks. Defaults to interval.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+([.][0-9]+)?(ms|s|m|h))+$') || duration(self) >= duration('0s')",message="must be at most 2562047h, the longest duration the operator can hold"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Prune deletes objects that this set applied before and no longer holds.
	// +optional
	Prune bool `json:"prune,omitempty"`

	// Suspend stops reconciling; what was applied stays as it is.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// Wait makes the set Ready only once the Skyhooks it applied are Ready.
	// +optional
	Wait bool `json:"wait,omitempty"`

	// ServiceAccountName is a ServiceAccount in this set's namespace that
	// the operator impersonates to apply, prune and read the set's objects,
	// so the set can do no more than the account's RBAC allows. Empty uses
	// the operator's --default-service-account, and when that is empty too,
	// the operator's own identity.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// DependsOn lists PackageSets that must be Ready before this one is
	// applied. The namespace defaults to this set's.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	DependsOn []meta.NamespacedObjectReference `json:"dependsOn,omitempty"`
}

// SourceReference points at a Flux source object.
type SourceReference struct {
	// APIVersion of the source, source.toolkit.fluxcd.io/v1 by default.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`

	// Kind of the source.
	// +kubebuilder:validation:Enum=GitRepository;OCIRepository
	// +required
	Kind string `json:"kind"`

	// Name of the source.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Namespace of the source; defaults to the PackageSet's namespace.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// PackageSetStatus is the observed state of a PackageSet.
type PackageSetStatus struct {
	// ObservedGeneration is the generation whose spec was last reconciled.
	// It is -1 until the operator first looks at the object.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciling and Stalled as Flux defines them.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`

	// LastAppliedRevision is the source revision last applied in full.
	// +optional
	LastAppliedRevision string `json:"lastAppliedRevision,omitempty"`

	// LastAttemptedRevision is the source revision last tried, applied or not.
	// +optional
	LastAttemptedRevision string `json:"lastAttemptedRevision,omitempty"`

	// Inventory lists the objects applied from the set, for pruning.
	// +optional
	Inventory *ResourceInventory `json:"inventory,omitempty"`
}

// ResourceInventory lists the objects a PackageSet applied.
type ResourceInventory struct {
	// Entries are the applied objects.
	// +optional
	Entries []ResourceRef `json:"entries"`
}

// ResourceRef identifies one applied object.
type ResourceRef struct {
	// ID is "<namespace>_<name>_<group>_<kind>", the namespace empty for
	// cluster-scoped objects.
	// +required
	ID string `json:"id"`

	// Version is the API version the object was applied with.
	// +required
	Version string `json:"v"`
}

// PackageSet applies the Skyhook and DeploymentPolicy manifests of a Flux
// source: all of them or, when any is invalid, none.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories={skyhook-all,fluxcd}
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message"
// +kubebuilder:printcolumn:name="Revision",type="string",JSONPath=".status.lastAppliedRevision",priority=1
// +kubebuilder:printcolumn:name="Suspended",type="boolean",JSONPath=".spec.suspend",priority=1
type PackageSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the source and how to apply it.
	// +required
	Spec PackageSetSpec `json:"spec"`

	// Status is written by the operator.
	// +kubebuilder:default={"observedGeneration":-1}
	// +optional
	Status PackageSetStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions (conditions.Getter).
func (in *PackageSet) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the status conditions (conditions.Setter).
func (in *PackageSet) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// PackageSetList is a list of PackageSets.
//
// +kubebuilder:object:root=true
type PackageSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PackageSets.
	Items []PackageSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PackageSet{}, &PackageSetList{})
}
