package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// barePod puts a pod without a controller on the node.
func barePod(t *testing.T, name, node string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "ghcr.io/x/job:1"}}},
	}
	if err := k8sClient(t).Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient(t).Delete(context.Background(), pod) })
	return pod
}

// unevictablePod puts a pod on the node that a PodDisruptionBudget keeps
// from being evicted, so a drain reports it instead of moving it.
func unevictablePod(t *testing.T, name, node string) *corev1.Pod {
	t.Helper()
	c := k8sClient(t)
	ctx := context.Background()
	pod := barePod(t, name, node)
	minOne := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minOne, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}},
	}
	if err := c.Create(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pdb) })
	eventually(t, "the controller-manager to compute the budget", func() bool {
		return c.Get(ctx, client.ObjectKeyFromObject(pdb), pdb) == nil && pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy == 1
	})
	return pod
}

func drainSkyhook(name string, onTimeout skyhookv1.DrainOnTimeout) *skyhookv1.Skyhook {
	one := 1
	return &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &one},
			Drain:              &skyhookv1.DrainOptions{Timeout: &metav1.Duration{Duration: 2 * time.Second}, OnTimeout: onTimeout},
			Packages:           skyhookv1.Packages{"tuning": withInterrupt(pkg("1.0.0", "ghcr.io/x/tuning", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot})},
		},
	}
}

// drain.onTimeout Delete: a pod the drain cannot evict is deleted once the
// timeout has passed, and the interrupt runs.
func TestDrainTimeoutDeletesWhatEvictionCannotMove(t *testing.T) {
	createNodes(t, simnode.Numbered("drainto", 1, map[string]string{"pool": "drainto"})...)
	c := k8sClient(t)
	ctx := context.Background()
	stuck := unevictablePod(t, "stuck", "drainto-0")
	sk := drainSkyhook("drainto", skyhookv1.DrainDelete)
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	got := waitSkyhook(t, "drainto", time.Minute, func(s *skyhookv1.Skyhook) bool {
		return strings.Contains(conditions.GetMessage(s, skyhookv1.DrainBlockedCondition), "default/stuck on drainto-0: ")
	})
	if isReady(got) {
		t.Fatal("Ready while the drain is blocked")
	}
	waitSkyhook(t, "drainto", time.Minute, isReady)
	if err := c.Get(ctx, client.ObjectKeyFromObject(stuck), stuck); !apierrors.IsNotFound(err) && stuck.DeletionTimestamp.IsZero() {
		t.Errorf("the pod eviction could not move is still there: %v", err)
	}
	if hosts.Reboots()["drainto-0"] != 1 {
		t.Errorf("reboots %v, want drainto-0 once", hosts.Reboots())
	}
}

// drain.onTimeout Skip: the node whose drain times out is given up for
// this generation: uncordoned, not interrupted, reported blocked, its budget
// slot going to the next node; the pod stays.
func TestDrainTimeoutSkipsTheNode(t *testing.T) {
	createNodes(t, simnode.Numbered("drainskip", 2, map[string]string{"pool": "drainskip"})...)
	c := k8sClient(t)
	ctx := context.Background()
	stuck := unevictablePod(t, "stuck-skip", "drainskip-0")
	sk := drainSkyhook("drainskip", skyhookv1.DrainSkip)
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	eventually(t, "drainskip-1 to complete in the slot drainskip-0 gave up", func() bool {
		return getNode(t, "drainskip-1").Labels[skyhookv1.StatusKey("drainskip")] == "complete"
	})
	got := waitSkyhook(t, "drainskip", time.Minute, func(s *skyhookv1.Skyhook) bool {
		return strings.Contains(conditions.GetMessage(s, skyhookv1.NodesBlockedCondition), "drainskip-0 (drain timed out; skipped") &&
			s.Status.CompleteNodes == "1/2"
	})
	if isReady(got) {
		t.Error("Ready with a node skipped")
	}
	n := getNode(t, "drainskip-0")
	if n.Spec.Unschedulable || n.Labels[skyhookv1.StatusKey("drainskip")] != "blocked" || hosts.Reboots()["drainskip-0"] != 0 {
		t.Errorf("the skipped node: cordoned %v, status %q, reboots %d; want uncordoned, blocked, not rebooted",
			n.Spec.Unschedulable, n.Labels[skyhookv1.StatusKey("drainskip")], hosts.Reboots()["drainskip-0"])
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(stuck), stuck); err != nil || !stuck.DeletionTimestamp.IsZero() {
		t.Errorf("the pod was removed although the node was skipped: %v", err)
	}
}

// drain.onTimeout Skip also gives up on a node held by a pod matching
// podNonInterruptLabels: the pod is left alone, the node uncordoned and
// blocked for this generation, and the next node gets the slot.
func TestDrainTimeoutSkipsANodeHeldByANonInterruptPod(t *testing.T) {
	createNodes(t, simnode.Numbered("holdskip", 2, map[string]string{"pool": "holdskip"})...)
	c := k8sClient(t)
	ctx := context.Background()
	training := barePod(t, "training-skip", "holdskip-0")
	label := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"training"}}}`))
	if err := c.Patch(ctx, training, label); err != nil {
		t.Fatal(err)
	}
	sk := drainSkyhook("holdskip", skyhookv1.DrainSkip)
	sk.Spec.PodNonInterruptLabels = metav1.LabelSelector{MatchLabels: map[string]string{"app": "training"}}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "holdskip", time.Minute, func(s *skyhookv1.Skyhook) bool {
		return strings.Contains(conditions.GetMessage(s, skyhookv1.NodesBlockedCondition), "holdskip-0 (drain timed out; skipped") &&
			s.Status.CompleteNodes == "1/2"
	})
	n := getNode(t, "holdskip-0")
	if n.Spec.Unschedulable || hosts.Reboots()["holdskip-0"] != 0 {
		t.Errorf("the skipped node: cordoned %v, reboots %d; want uncordoned, not rebooted", n.Spec.Unschedulable, hosts.Reboots()["holdskip-0"])
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(training), training); err != nil || !training.DeletionTimestamp.IsZero() {
		t.Errorf("the non-interrupt pod was touched: %v", err)
	}
}
