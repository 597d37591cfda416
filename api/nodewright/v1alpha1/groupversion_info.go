// Package v1alpha1 holds NodeWright's API: the NodeWright and
// DeploymentPolicy kinds of the nodewright.nvidia.com group, the names
// NVIDIA's NodeWright (formerly Skyhook) serves since its v0.18, so that
// its users' manifests are accepted unchanged.
//
// The kinds share their spec and status types with the skyhook.nvidia.com
// group (api/v1alpha1): one rollout engine serves both, and a NodeWright
// is a Skyhook under another name, prefix and finalizer
// (skyhookv1.RolloutKind). Only what differs is here: the printer columns
// NodeWright prints, and the schema rules NodeWright v0.20 added for its
// group alone.
//
// +kubebuilder:object:generate=true
// +groupName=nodewright.nvidia.com
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "nodewright.nvidia.com", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
