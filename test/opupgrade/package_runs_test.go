package opupgrade

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// packageRunsCommit is the last commit whose operator made pods of several
// packages (with --package-runs, since removed).
const packageRunsCommit = "0d1ca9ce943b34abeca3efb967c49399b98b3203"

// runsSkyhook has three packages a node starts together: base, extra (3 s
// a stage, the one running when the old operator dies) and tool, which
// depends on base. Under --package-runs they ran in one pod per node, in
// that order.
func runsSkyhook(name string) *skyhookv1.Skyhook {
	pkg := func(version, image, duration string, deps map[string]string) skyhookv1.Package {
		return skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Version: version}, Image: image, DependsOn: deps,
			Env: []corev1.EnvVar{{Name: simnode.DurationEnv, Value: duration}}}
	}
	two := 2
	return &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: skyhookv1.SkyhookSpec{
		NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}},
		InterruptionBudget: skyhookv1.InterruptionBudget{Count: &two},
		Packages: skyhookv1.Packages{
			"base":  pkg("1.0.0", "ghcr.io/x/base", "300ms", nil),
			"extra": pkg("1.0.0", "ghcr.io/x/extra", "3s", nil),
			"tool":  pkg("1.0.0", "ghcr.io/x/tool", "300ms", map[string]string{"base": "1.0.0"}),
		},
	}}
}

// TestUpgradeFromPackageRunsMidRun: the operator of packageRunsCommit, run
// with --package-runs, starts one pod per node for three packages and is
// SIGKILLed while the pods run their second package; the current
// operator, which makes no such pods, reads them to their end. No stage
// runs twice, no stage pod is made anew, and every record ends complete.
func TestUpgradeFromPackageRunsMidRun(t *testing.T) {
	previous, _, err := buildAt(packageRunsCommit)
	if errors.Is(err, errNoHistory) {
		t.Skipf("no operator that made pods of several packages to upgrade from: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	const name = "runs"
	ctx := context.Background()
	c := testenv.Client(t, env)
	nodes := simnode.Numbered(name, 2, map[string]string{"pool": name})
	if err := env.CreateNodes(ctx, nodes...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			_ = env.Clientset.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{})
		}
	})
	pods := watchStagePods(t, name)
	d := newDeployment(t)
	old := d.start(t, previous, "runs-old", "--package-runs")
	testenv.Eventually(t, "the Skyhook created through the old operator's webhooks", time.Minute, func() bool {
		old.running(t, d)
		return c.Create(ctx, runsSkyhook(name)) == nil
	})
	testenv.Eventually(t, "base complete and extra running on every node", 2*time.Minute, func() bool {
		old.running(t, d)
		for _, n := range nodes {
			record := recordOf(t, n.Name, name)
			if record["base|1.0.0"].State != skyhookv1.StateComplete || record["base|1.0.0"].Stage != skyhookv1.StageConfig ||
				record["extra|1.0.0"].State != skyhookv1.StateInProgress {
				return false
			}
		}
		return true
	})
	old.kill()
	checkOnePodPerNode(t, pods, nodes)
	before := pods.seen()

	d.start(t, currentBinary, "runs-new")
	t.Cleanup(func() { _ = deleteSkyhook(t, c, name) })
	testenv.Eventually(t, "the Skyhook Ready under the new operator", 2*time.Minute, func() bool {
		var got skyhookv1.Skyhook
		return c.Get(ctx, client.ObjectKey{Name: name}, &got) == nil && got.Status.ObservedGeneration == got.Generation &&
			got.Status.Status == skyhookv1.StatusComplete && conditions.IsReady(&got)
	})
	if made := pods.since(before); len(made) > 0 {
		t.Errorf("the new operator made stage pods %+v: it was to read the old one's to their end", made)
	}
	succeeded := pods.succeededByStage()
	for _, n := range nodes {
		for _, pkg := range []string{"base", "extra", "tool"} {
			for _, stage := range []string{"apply", "config"} {
				key := fmt.Sprintf("%s/%s@1.0.0/%s", n.Name, pkg, stage)
				if succeeded[key] != 1 {
					t.Errorf("stage %s succeeded %d times, want once", key, succeeded[key])
				}
			}
		}
		record := recordOf(t, n.Name, name)
		for _, pkg := range []string{"base", "extra", "tool"} {
			if e := record[pkg+"|1.0.0"]; e.Stage != skyhookv1.StageConfig || e.State != skyhookv1.StateComplete {
				t.Errorf("node %s: %s ends at %s %s, want config complete", n.Name, pkg, e.Stage, e.State)
			}
		}
	}
}

// checkOnePodPerNode fails the test unless the old operator ran the three
// packages in one pod on each node: what this test upgrades from.
func checkOnePodPerNode(t *testing.T, pods *podLog, nodes []simnode.Node) {
	t.Helper()
	holds := pods.packagesPerPod()
	for _, n := range nodes {
		if len(holds[n.Name]) != 1 {
			t.Fatalf("node %s had %d stage pods under the old operator (%v), want one pod of its three packages", n.Name, len(holds[n.Name]), holds[n.Name])
		}
		for _, packages := range holds[n.Name] {
			if packages != 3 {
				t.Fatalf("node %s: the old operator's pod holds %d packages, want 3", n.Name, packages)
			}
		}
	}
}

func recordOf(t *testing.T, node, skyhook string) skyhookv1.NodeState {
	t.Helper()
	n, err := env.Clientset.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	record, err := nodestate.Read(n, skyhookv1.Skyhooks.Named(skyhook))
	if err != nil {
		t.Fatal(err)
	}
	return record
}

// deleteSkyhook deletes the Skyhook while an operator runs to take its
// finalizer off, waits until it is gone, and reports whether it went.
func deleteSkyhook(t *testing.T, c client.Client, name string) bool {
	ctx := context.Background()
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Delete(ctx, sk); err != nil {
		t.Errorf("deleting the Skyhook: %v", err)
		return false
	}
	testenv.Eventually(t, "the Skyhook gone", 30*time.Second, func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: name}, sk))
	})
	return true
}
