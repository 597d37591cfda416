// Package v1alpha1 holds the Skyhook API: the Skyhook, DeploymentPolicy and
// PackageSet kinds of the skyhook.nvidia.com group.
//
// The group and field names are those of NVIDIA's Skyhook so that its manifests
// are accepted unchanged; the status follows Flux's conventions so kstatus,
// `kubectl wait` and Flux health checks understand it.
//
// +kubebuilder:object:generate=true
// +groupName=skyhook.nvidia.com
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "skyhook.nvidia.com", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
