package reconcile_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// The drain before an interrupt takes the pods NodeWright takes and leaves
// the ones it leaves: a pod with a controller and a bare pod are evicted
// (the bare one with a Warning event, since nothing recreates it); pods in
// kube-system and pods that tolerate the cordon stay.
func TestDrainTakesWhatNodeWrightTakes(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	const node = "drainrules-0"
	createNodes(t, simnode.Node{Name: node, Labels: map[string]string{"pool": "drainrules"}})
	podOn := func(namespace, name string, managed bool, tolerations ...corev1.Toleration) *corev1.Pod {
		t.Helper()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec:       corev1.PodSpec{NodeName: node, Tolerations: tolerations, Containers: []corev1.Container{{Name: "main", Image: "ghcr.io/x/app:1"}}},
		}
		if managed {
			// An owner that exists, so the garbage collector leaves the pod alone.
			owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-owner", Namespace: namespace}}
			if err := c.Create(ctx, owner); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Delete(context.Background(), owner) })
			yes := true
			pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &yes}}
		}
		if err := c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), pod) })
		return pod
	}
	managed := podOn("default", "drain-managed", true)
	bare := podOn("default", "drain-bare", false)
	system := podOn("kube-system", "drain-system", true)
	tolerant := podOn("default", "drain-tolerant", true, corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists})

	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "drainrules"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "drainrules"}},
			Packages:     skyhookv1.Packages{"tuning": withInterrupt(pkg("1.0.0", "ghcr.io/x/tuning", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptNoop})},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "drainrules", time.Minute, isReady)
	waitWarning(t, "drainrules", "BarePodEvicted", "default/drain-bare")

	gone := func(pod *corev1.Pod) bool {
		err := c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		return apierrors.IsNotFound(err)
	}
	for _, pod := range []*corev1.Pod{managed, bare} {
		if !gone(pod) {
			t.Errorf("%s/%s is still on the drained node", pod.Namespace, pod.Name)
		}
	}
	for _, pod := range []*corev1.Pod{system, tolerant} {
		if gone(pod) {
			t.Errorf("%s/%s was evicted; NodeWright leaves it", pod.Namespace, pod.Name)
		}
	}
}
