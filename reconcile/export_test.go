package reconcile

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// What the tests of package reconcile_test call directly: taking a stage
// pod out of the rollout, as a pass does, with a pod read from a cache that
// may be behind.

func (r *SkyhookReconciler) DeleteStagePod(ctx context.Context, sk *skyhookv1.Skyhook, pod *corev1.Pod) error {
	return r.deletePod(ctx, sk, pod)
}

func (r *SkyhookReconciler) RetireStagePod(ctx context.Context, sk *skyhookv1.Skyhook, pod *corev1.Pod) error {
	return r.retire(ctx, sk, pod)
}
