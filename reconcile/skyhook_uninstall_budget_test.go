package reconcile_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// A deleted rollout uninstalls its package node after node within its
// budget: with room for one node at a time, the uninstall of the first
// node ends, its pod goes and the next node's starts, until every node is
// uninstalled and the rollout is gone. Both kinds, from the same engine.
func TestDeletionUninstallsOneNodeAtATime(t *testing.T) {
	eachKind(t, func(t *testing.T, k kindCase) {
		const base = "delbudget"
		oneAtATime(t, k, base)
		c := k8sClient(t)
		ctx := context.Background()
		obj := k.New()
		obj.SetName(k.name(base))
		if err := c.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
		waitUninstalled(t, k, base, func() bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: k.name(base)}, k.New()))
		})
	})
}

// An explicit uninstall (uninstall.apply) goes node after node within the
// budget the same way, each node's uninstall pod leaving with its record,
// until no node records the package.
func TestExplicitUninstallOneNodeAtATime(t *testing.T) {
	eachKind(t, func(t *testing.T, k kindCase) {
		const base = "unbudget"
		oneAtATime(t, k, base)
		k.edit(t, base, func(spec *skyhookv1.SkyhookSpec) {
			driver := spec.Packages["driver"]
			driver.Uninstall.Apply = true
			spec.Packages["driver"] = driver
		})
		waitUninstalled(t, k, base, func() bool {
			for i := range 3 {
				if record(t, k, base, i) != "{}" {
					return false
				}
			}
			return true
		})
	})
}

// oneAtATime creates three nodes and a rollout of the kind with an
// uninstallable package and room for one node at a time, and waits until
// it is installed everywhere.
func oneAtATime(t *testing.T, k kindCase, base string) {
	t.Helper()
	name := k.name(base)
	createNodes(t, simnode.Numbered(name, 3, map[string]string{"pool": name})...)
	p := pkg("1.0.0", "ghcr.io/x/driver", nil)
	p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1s"}}
	p.Uninstall = &skyhookv1.Uninstall{Enabled: true}
	one := 1
	k.create(t, base, skyhookv1.SkyhookSpec{
		NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}},
		InterruptionBudget: skyhookv1.InterruptionBudget{Count: &one},
		Packages:           skyhookv1.Packages{"driver": p},
	})
	k.wait(t, base, 2*time.Minute, isReady)
}

// record is the rollout's record on its node i.
func record(t *testing.T, k kindCase, base string, i int) string {
	t.Helper()
	return getNode(t, k.name(base)+"-"+strconv.Itoa(i)).Annotations[k.ref(base).NodeStateAnnotation()]
}

// waitUninstalled waits for done; on timeout it says where the uninstall
// stopped: the rollout's stage pods and the nodes' records.
func waitUninstalled(t *testing.T, k kindCase, base string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !done() {
		if time.Now().After(deadline) {
			var pods corev1.PodList
			if err := k8sClient(t).List(context.Background(), &pods, client.InNamespace(operatorNamespace)); err == nil {
				for _, p := range pods.Items {
					if p.Labels[k.OwnerLabel()] == k.name(base) {
						t.Logf("pod %s on %s, stage %s, result %v", p.Name, p.Spec.NodeName, p.Labels[stagepod.StageLabel], stagepod.Read(&p).Result)
					}
				}
			}
			for i := range 3 {
				t.Logf("node %s-%d: record %s", k.name(base), i, record(t, k, base, i))
			}
			t.Fatalf("the uninstall of %s did not reach every node in 2 minutes", k.name(base))
		}
		time.Sleep(time.Second)
	}
}
