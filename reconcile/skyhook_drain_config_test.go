package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// drainConfigSpec is a one-node rollout of a package with a reboot, drained
// as cfg says.
func drainConfigSpec(pool string, cfg *skyhookv1.DrainConfig) skyhookv1.SkyhookSpec {
	return skyhookv1.SkyhookSpec{
		NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}},
		DrainConfig:  cfg,
		Packages:     skyhookv1.Packages{"tuning": withInterrupt(pkg("1.0.0", "ghcr.io/x/tuning", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot})},
	}
}

// NodeWright v0.20's drain-config scenario: disableEviction deletes a pod
// a PodDisruptionBudget allowing no disruption protects, and the reboot
// runs.
func TestDrainConfigDisableEvictionDeletesThroughABudget(t *testing.T) {
	createNodes(t, simnode.Numbered("noevict", 1, map[string]string{"pool": "noevict"})...)
	c := k8sClient(t)
	ctx := context.Background()
	web := unevictablePod(t, "noevict-web", "noevict-0")
	nw := &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: "noevict"},
		Spec: drainConfigSpec("noevict", &skyhookv1.DrainConfig{DisableEviction: ptr.To(true), GracePeriod: &metav1.Duration{Duration: 1500 * time.Millisecond}})}
	if err := c.Create(ctx, nw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, nw) })
	waitNodeWright(t, "noevict", 2*time.Minute, func(nw *nodewrightv1.NodeWright) bool { return conditions.IsReady(nw) })
	if err := c.Get(ctx, client.ObjectKeyFromObject(web), web); !apierrors.IsNotFound(err) && web.DeletionTimestamp.IsZero() {
		t.Errorf("the budget-protected pod is still there: %v", err)
	}
	if hosts.Reboots()["noevict-0"] != 1 {
		t.Errorf("reboots %v, want noevict-0 once", hosts.Reboots())
	}
}

// force and deleteEmptyDirData false: a bare pod and a pod with emptyDir
// data block the drain (DrainBlocked reason MultipleCauses, both in
// drainBlocked_); past drainConfig.timeout the node is erroring and stays
// cordoned, nothing is evicted or rebooted, and a Warning event says the
// drain timed out.
func TestDrainConfigBlocksThenTimesOut(t *testing.T) {
	createNodes(t, simnode.Numbered("dcblock", 1, map[string]string{"pool": "dcblock"})...)
	c := k8sClient(t)
	ctx := context.Background()
	bare := barePod(t, "dc-bare", "dcblock-0")
	scratch := withEmptyDir(t, "dc-scratch", "dcblock-0")
	nw := &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: "dcblock"},
		Spec: drainConfigSpec("dcblock", &skyhookv1.DrainConfig{Force: ptr.To(false), DeleteEmptyDirData: ptr.To(false),
			Timeout: &metav1.Duration{Duration: 6 * time.Second}})}
	if err := c.Create(ctx, nw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, nw) })
	blocked := waitNodeWright(t, "dcblock", time.Minute, func(nw *nodewrightv1.NodeWright) bool {
		return conditions.GetReason(nw, skyhookv1.DrainBlockedCondition) == "MultipleCauses"
	})
	if msg := conditions.GetMessage(blocked, skyhookv1.DrainBlockedCondition); msg != "1/1 nodes blocked draining (dcblock-0)" {
		t.Errorf("DrainBlocked says %q", msg)
	}
	marks := getNode(t, "dcblock-0").Annotations["nodewright.nvidia.com/drainBlocked_dcblock"]
	if !strings.Contains(marks, `{"namespace":"default","name":"dc-bare","reason":"UnmanagedPod"}`) ||
		!strings.Contains(marks, `{"namespace":"default","name":"dc-scratch","reason":"EmptyDirData"}`) {
		t.Errorf("drainBlocked_ says %s", marks)
	}

	erroring := waitNodeWright(t, "dcblock", time.Minute, func(nw *nodewrightv1.NodeWright) bool {
		return nw.Status.Status == skyhookv1.StatusErroring
	})
	waitWarning(t, "dcblock", "Drain", "drain timed out on node dcblock-0")
	n := getNode(t, "dcblock-0")
	if !n.Spec.Unschedulable || n.Labels["nodewright.nvidia.com/status_dcblock"] != "erroring" || hosts.Reboots()["dcblock-0"] != 0 {
		t.Errorf("after the timeout: cordoned %v, status %q, reboots %d; want cordoned, erroring, not rebooted",
			n.Spec.Unschedulable, n.Labels["nodewright.nvidia.com/status_dcblock"], hosts.Reboots()["dcblock-0"])
	}
	if n.Annotations["nodewright.nvidia.com/drainBlocked_dcblock"] == "" || n.Annotations["nodewright.nvidia.com/drainStart_dcblock"] == "" {
		t.Errorf("the timed-out drain's marks are gone: %v", n.Annotations)
	}
	if len(erroring.Status.NodesNeedingAttention) == 0 || !strings.Contains(erroring.Status.NodesNeedingAttention[0].Message, "drain timed out") {
		t.Errorf("attention: %+v", erroring.Status.NodesNeedingAttention)
	}
	time.Sleep(3 * time.Second) // nothing more is evicted
	// As v0.20 (its drain-config e2e timeout-assert): the drain that timed
	// out still reads as blocked, with what blocked it.
	if still := waitNodeWright(t, "dcblock", time.Second, func(*nodewrightv1.NodeWright) bool { return true }); !conditions.IsTrue(still, skyhookv1.DrainBlockedCondition) ||
		conditions.GetMessage(still, skyhookv1.DrainBlockedCondition) != "1/1 nodes blocked draining (dcblock-0)" {
		t.Errorf("after the timeout: DrainBlocked %v", conditions.Get(still, skyhookv1.DrainBlockedCondition))
	}
	for _, pod := range []*corev1.Pod{bare, scratch} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil || !pod.DeletionTimestamp.IsZero() {
			t.Errorf("%s was removed: %v", pod.Name, err)
		}
	}
}

// withEmptyDir puts a managed pod with an emptyDir volume on the node.
func withEmptyDir(t *testing.T, name, node string) *corev1.Pod {
	t.Helper()
	c := k8sClient(t)
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-owner", Namespace: "default"}}
	if err := c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), owner) })
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "ghcr.io/x/app:1"}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}},
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pod) })
	return pod
}
