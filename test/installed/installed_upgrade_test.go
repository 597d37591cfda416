package installed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// leaseName is the operator's leader election Lease.
const leaseName = "skyhook-operator.skyhook.nvidia.com"

// In the middle of a rollout, one node at a time, the leader pod is
// deleted and the standby takes over; then `helm upgrade` replaces both
// pods with another build (a rolling update, the Lease changing hands
// again). The rollout completes with each node's stage pod created once
// and each step run once on the real nodes. `helm rollback` brings the
// first build back, nothing runs again, and the rolled-back operator
// uninstalls the package when the Skyhook is deleted.
func TestLeaderLossAndHelmUpgradeMidRollout(t *testing.T) {
	needRealNodes(t)
	first, second := buildImages(t, "test-1"), buildImages(t, "test-2")
	// Made first so that it is removed last, after the uninstall (cleanups
	// run last registered first), whose steps write in it.
	hostDir := t.TempDir()
	const name = "upgraded"
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Join("/var/lib/skyhook", name)) })
	helmInstall(t, values(first))
	t.Cleanup(func() { helmUninstall(t) })
	ctx := context.Background()
	c := testenv.Client(t, env)

	sk := fleetSkyhook(name, pushPackage(t), hostDir)
	sk.Spec.InterruptionBudget = skyhookv1.InterruptionBudget{Count: ptrTo(1)} // one node at a time
	marker := sk.Spec.Packages["marker"]
	marker.Env = append(marker.Env,
		corev1.EnvVar{Name: "SLOW", Value: "4"},               // the real nodes' steps sleep
		corev1.EnvVar{Name: simnode.DurationEnv, Value: "4s"}) // the simulated nodes' stages take
	sk.Spec.Packages["marker"] = marker
	podsPerNode := tallyStagePods(t, name)
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}

	testenv.Eventually(t, "the rollout under way", time.Minute, func() bool { return len(podsPerNode()) > 0 })
	leader := leaderPod(t)
	if err := env.Clientset.CoreV1().Pods(namespace).Delete(ctx, leader, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the standby leading", time.Minute, func() bool {
		now := leaderPod(t)
		return now != "" && now != leader
	})
	if done := getSkyhook(t, name); done.Status.Status == skyhookv1.StatusComplete {
		t.Fatalf("the rollout ended before the upgrade: make the stages longer")
	}
	helmUpgrade(t, second)
	waitDeploymentSettled(t)
	for _, p := range operatorPods(t) {
		if p.DeletionTimestamp == nil && !strings.HasSuffix(p.Spec.Containers[0].Image, ":"+second.version) {
			t.Errorf("after the upgrade operator pod %s runs %s", p.Name, p.Spec.Containers[0].Image)
		}
	}

	waitComplete(t, name)
	checkRanOnce(t, podsPerNode(), hostDir)

	helmRollback(t, 1)
	waitDeploymentSettled(t)
	for _, p := range operatorPods(t) {
		if p.DeletionTimestamp == nil && !strings.HasSuffix(p.Spec.Containers[0].Image, ":"+first.version) {
			t.Errorf("after the rollback operator pod %s runs %s", p.Name, p.Spec.Containers[0].Image)
		}
	}
	time.Sleep(5 * time.Second) // a pass or two of the rolled-back operator
	if got := getSkyhook(t, name); got.Status.Status != skyhookv1.StatusComplete {
		t.Errorf("after the rollback the Skyhook is %s", got.Status.Status)
	}
	checkRanOnce(t, podsPerNode(), hostDir)

	// Deleted by the rolled-back operator: the package's uninstall runs on
	// every node, one at a time, and the Skyhook goes.
	if err := c.Delete(ctx, sk); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the Skyhook uninstalled and gone", 3*time.Minute, func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: name}, &skyhookv1.Skyhook{}))
	})
	for _, node := range realNodes {
		if _, err := os.Stat(filepath.Join(hostDir, "out", node, "uninstalled")); err != nil {
			t.Errorf("%s: the uninstall step did not run: %v", node, err)
		}
	}
}

// waitDeploymentSettled waits until the operator's Deployment has rolled
// out in full: every replica of the newest template available and no
// other pod left. Helm's wait returns earlier, once enough new pods are
// ready, while old ones still stop and the Lease may still change hands.
func waitDeploymentSettled(t testing.TB) {
	t.Helper()
	testenv.Eventually(t, "the operator's Deployment rolled out", 2*time.Minute, func() bool {
		d, err := env.Clientset.AppsV1().Deployments(namespace).Get(context.Background(), "skyhook-operator-controller-manager", metav1.GetOptions{})
		if err != nil || d.Spec.Replicas == nil {
			return false
		}
		want := *d.Spec.Replicas
		s := d.Status
		return s.ObservedGeneration == d.Generation && s.UpdatedReplicas == want && s.AvailableReplicas == want &&
			s.Replicas == want && len(operatorPods(t)) == int(want)
	})
}

// checkRanOnce fails unless every node had one stage pod (apply and
// config run in one) and each real node ran each step once.
func checkRanOnce(t *testing.T, podsPerNode map[string]int, hostDir string) {
	t.Helper()
	nodes, err := env.Clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if podsPerNode[n.Name] != 1 {
			t.Errorf("node %s had %d stage pods, want 1 (all: %v)", n.Name, podsPerNode[n.Name], podsPerNode)
		}
	}
	checkStepsRanOnce(t, hostDir)
}

// tallyStagePods counts, by node, the stage pods created for the Skyhook
// from now on.
func tallyStagePods(t *testing.T, skyhook string) func() map[string]int {
	t.Helper()
	w, err := env.Clientset.CoreV1().Pods(namespace).Watch(context.Background(), metav1.ListOptions{LabelSelector: stagepod.SkyhookLabel + "=" + skyhook})
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Tally(t, w, func(ev watch.Event) []string {
		if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
			return []string{pod.Spec.NodeName}
		}
		return nil
	})
}

// leaderPod is the operator pod holding the Lease ("" while none does).
func leaderPod(t testing.TB) string {
	t.Helper()
	lease, err := env.Clientset.CoordinationV1().Leases(namespace).Get(context.Background(), leaseName, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	pod, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
	return pod
}

// getSkyhook reads the Skyhook.
func getSkyhook(t testing.TB, name string) *skyhookv1.Skyhook {
	t.Helper()
	sk := &skyhookv1.Skyhook{}
	if err := testenv.Client(t, env).Get(context.Background(), client.ObjectKey{Name: name}, sk); err != nil {
		t.Fatal(err)
	}
	return sk
}
