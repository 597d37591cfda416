package reconcile_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// A deleted Skyhook uninstalls its package node after node within its
// budget: with room for one node at a time, the uninstall of the first
// node ends, its pod goes and the next node's starts, until every node is
// uninstalled and the Skyhook is gone.
func TestDeletionUninstallsOneNodeAtATime(t *testing.T) {
	c, sk := oneAtATime(t, "delbudget")
	ctx := context.Background()
	if err := c.Delete(ctx, sk); err != nil {
		t.Fatal(err)
	}
	waitUninstalled(t, sk.Name, func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: sk.Name}, &skyhookv1.Skyhook{}))
	})
}

// An explicit uninstall (uninstall.apply) goes node after node within the
// budget the same way, each node's uninstall pod leaving with its record,
// until no node records the package.
func TestExplicitUninstallOneNodeAtATime(t *testing.T) {
	c, sk := oneAtATime(t, "unbudget")
	ctx := context.Background()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
			return err
		}
		driver := sk.Spec.Packages["driver"]
		driver.Uninstall.Apply = true
		sk.Spec.Packages["driver"] = driver
		return c.Update(ctx, sk)
	}); err != nil {
		t.Fatal(err)
	}
	waitUninstalled(t, sk.Name, func() bool {
		for i := range 3 {
			if state := getNode(t, sk.Name+"-"+string(rune('0'+i))).Annotations[skyhookv1.NodeStateAnnotation(sk.Name)]; state != "{}" {
				return false
			}
		}
		return true
	})
}

// oneAtATime creates three nodes and a Skyhook with an uninstallable
// package and room for one node at a time, and waits until it is
// installed everywhere.
func oneAtATime(t *testing.T, name string) (client.Client, *skyhookv1.Skyhook) {
	t.Helper()
	createNodes(t, simnode.Numbered(name, 3, map[string]string{"pool": name})...)
	c := k8sClient(t)
	p := pkg("1.0.0", "ghcr.io/x/driver", nil)
	p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1s"}}
	p.Uninstall = &skyhookv1.Uninstall{Enabled: true}
	one := 1
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &one},
			Packages:           skyhookv1.Packages{"driver": p},
		},
	}
	if err := c.Create(context.Background(), sk); err != nil {
		t.Fatal(err)
	}
	waitSkyhook(t, name, 2*time.Minute, isReady)
	return c, sk
}

// waitUninstalled waits for done; on timeout it says where the uninstall
// stopped: the Skyhook's stage pods and the nodes' records.
func waitUninstalled(t *testing.T, name string, done func() bool) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for !done() {
		if time.Now().After(deadline) {
			var pods corev1.PodList
			if err := k8sClient(t).List(ctx, &pods, client.InNamespace(operatorNamespace)); err == nil {
				for _, p := range pods.Items {
					if p.Labels[stagepod.SkyhookLabel] == name {
						t.Logf("pod %s on %s, stage %s, %v", p.Name, p.Spec.NodeName, p.Labels[stagepod.StageLabel], stagepod.Read(&p).Result)
					}
				}
			}
			for i := range 3 {
				n := getNode(t, name+"-"+string(rune('0'+i)))
				t.Logf("node %s: record %s", n.Name, n.Annotations[skyhookv1.NodeStateAnnotation(name)])
			}
			t.Fatalf("the uninstall of %s did not reach every node in 2 minutes", name)
		}
		time.Sleep(time.Second)
	}
}
