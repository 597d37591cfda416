package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// View is the NodeWright as the rollout engine sees the objects of every
// kind: a Skyhook whose apiVersion and kind are NodeWright's, so that
// skyhookv1.KindOf finds its keys, finalizer and annotations, and events
// about it name the NodeWright. It shares the NodeWright's metadata, spec
// and status values (their maps and slices too); Apply takes back what the
// engine changed.
func (in *NodeWright) View() *skyhookv1.Skyhook {
	return &skyhookv1.Skyhook{TypeMeta: metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: skyhookv1.NodeWrights.Kind},
		ObjectMeta: in.ObjectMeta, Spec: in.Spec, Status: in.Status}
}

// Apply takes the metadata (finalizers, annotations) and the status of a
// View back into the NodeWright; the engine does not change a spec.
func (in *NodeWright) Apply(view *skyhookv1.Skyhook) {
	in.ObjectMeta, in.Status = view.ObjectMeta, view.Status
}

// View is the DeploymentPolicy as the rollout engine reads policies of
// every group.
func (in *DeploymentPolicy) View() *skyhookv1.DeploymentPolicy {
	return &skyhookv1.DeploymentPolicy{TypeMeta: metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: "DeploymentPolicy"},
		ObjectMeta: in.ObjectMeta, Spec: in.Spec, Status: in.Status}
}
