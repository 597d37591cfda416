package reconcile_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile"
	"github.com/skyhook-go/skyhook/reconcile/retention"
)

// A stage pod read from a cache that is behind may be gone, and its name
// another try's: deleting it, or keeping it for its logs, leaves that other
// pod alone (the writes carry the old pod's UID).
func TestStalePodWritesLeaveTheNewPodOfItsName(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "stale", UID: "stale-uid"}}
	r := &reconcile.SkyhookReconciler{Client: c, FailedTTL: time.Hour}
	for _, tc := range []struct {
		name, pod string
		takeOut   func(old *corev1.Pod) error
	}{
		{"delete", "stale-delete", func(old *corev1.Pod) error { return r.DeleteStagePod(ctx, sk, old) }},
		{"keep for its logs", "stale-keep", func(old *corev1.Pod) error {
			// Failed as the cache showed it: a step exited 1.
			old.Status.Phase = corev1.PodFailed
			old.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}
			return r.RetireStagePod(ctx, sk, old)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := replacedPod(t, c, tc.pod)
			if err := tc.takeOut(old); err != nil {
				t.Fatalf("%s with the replaced pod: %v", tc.name, err)
			}
			var now corev1.Pod
			if err := c.Get(ctx, client.ObjectKeyFromObject(old), &now); err != nil {
				t.Fatalf("the new pod of the name: %v", err)
			}
			if now.UID == old.UID {
				t.Fatalf("the pod of the name is still the old one (%s)", old.UID)
			}
			if retention.Retained(&now) || !now.DeletionTimestamp.IsZero() {
				t.Errorf("the new pod %s was taken out by a write meant for %s: labels %v, deleted %v", now.UID, old.UID, now.Labels, now.DeletionTimestamp)
			}
		})
	}
}

// replacedPod creates a pod, deletes it and creates another of its name;
// it returns the first as a cache that is behind shows it.
func replacedPod(t *testing.T, c client.Client, name string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	newPod := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: operatorNamespace},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "ghcr.io/x/none"}}}}
	}
	old := newPod()
	if err := c.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	// Unscheduled: the apiserver removes it at once.
	if err := c.Delete(ctx, old, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first pod gone", func() bool {
		var p corev1.Pod
		return c.Get(ctx, client.ObjectKeyFromObject(old), &p) != nil
	})
	replacement := newPod()
	if err := c.Create(ctx, replacement); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, replacement, client.GracePeriodSeconds(0)) })
	return old
}
