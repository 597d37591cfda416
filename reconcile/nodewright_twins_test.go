package reconcile_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// twinSpec is a spec of one package that declares uninstall support, so
// that deleting the rollout that leads would uninstall it everywhere.
func twinSpec(pool string, stageTime string) skyhookv1.SkyhookSpec {
	p := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	p.Uninstall = &skyhookv1.Uninstall{Enabled: true}
	p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: stageTime}}
	return skyhookv1.SkyhookSpec{
		NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}},
		Packages:     skyhookv1.Packages{"tuning": p},
	}
}

// Renaming a manifest's kind from Skyhook to NodeWright, applied as Flux
// and PackageSets apply it (the new object first, then the old one pruned),
// hands the node records over: no stage runs again, no uninstall runs,
// the Skyhook goes at once, and its keys leave the nodes.
func TestRenamingASkyhookToANodeWrightRerunsAndUninstallsNothing(t *testing.T) {
	createNodes(t, simnode.Numbered("rename", 2, map[string]string{"pool": "rename"})...)
	c := k8sClient(t)
	ctx := context.Background()
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "rename"}, Spec: twinSpec("rename", "100ms")}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "rename", 2*time.Minute, isReady)
	records := map[string]string{}
	for _, n := range nodesOf(t, "rename") {
		records[n.Name] = n.Annotations["skyhook.nvidia.com/nodeState_rename"]
	}

	created := stagePodsOn(t, "rename-")
	nw := &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: "rename"}, Spec: twinSpec("rename", "100ms")}
	if err := c.Create(ctx, nw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, nw) })
	if err := c.Delete(ctx, sk); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pruned Skyhook to be gone", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: "rename"}, &skyhookv1.Skyhook{}))
	})
	got := waitNodeWright(t, "rename", time.Minute, func(nw *nodewrightv1.NodeWright) bool {
		return conditions.IsReady(nw) && nw.Status.ObservedGeneration == nw.Generation
	})
	if got.Status.CompleteNodes != "2/2" {
		t.Errorf("NodeWright complete on %s nodes, want 2/2", got.Status.CompleteNodes)
	}
	for _, n := range nodesOf(t, "rename") {
		if n.Annotations["nodewright.nvidia.com/nodeState_rename"] != records[n.Name] || n.Labels["nodewright.nvidia.com/status_rename"] != "complete" {
			t.Errorf("node %s: the NodeWright's record %s, want the Skyhook's %s", n.Name, n.Annotations["nodewright.nvidia.com/nodeState_rename"], records[n.Name])
		}
		for key := range n.Annotations {
			if strings.HasPrefix(key, "skyhook.nvidia.com/") && strings.HasSuffix(key, "_rename") {
				t.Errorf("node %s keeps %s", n.Name, key)
			}
		}
		if nodeCondition(&n, "skyhook.nvidia.com/rename/NotReady") != nil {
			t.Errorf("node %s keeps the Skyhook's node condition", n.Name)
		}
	}
	if pods := created(); len(pods) > 0 {
		t.Errorf("stage pods created after the rename: %v", pods)
	}
}

// A rename in the middle of a stage: the running stage pod becomes the
// NodeWright's (not garbage collected with the pruned Skyhook) and is read
// by it; no second pod runs that stage, nor the config stage the pod runs
// after it (a run's).
func TestRenameMidStageAdoptsTheRunningStagePod(t *testing.T) {
	createNodes(t, simnode.Numbered("midrename", 1, map[string]string{"pool": "midrename"})...)
	c := k8sClient(t)
	ctx := context.Background()
	created := stagePodsOn(t, "midrename-")
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "midrename"}, Spec: twinSpec("midrename", "6s")}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	eventually(t, "the apply stage to run", func() bool { return slices.Contains(created(), "Skyhook/midrename-0/apply") })

	nw := &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: "midrename"}, Spec: twinSpec("midrename", "6s")}
	if err := c.Create(ctx, nw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, nw) })
	if err := c.Delete(ctx, sk); err != nil {
		t.Fatal(err)
	}
	waitNodeWright(t, "midrename", 2*time.Minute, func(nw *nodewrightv1.NodeWright) bool { return conditions.IsReady(nw) })
	if got, want := created(), []string{"Skyhook/midrename-0/apply", "Skyhook/midrename-0/config"}; !slices.Equal(got, want) {
		t.Errorf("stages of the pods created %v, want %v: the run's pod adopted, nothing started by the NodeWright", got, want)
	}
}

// NodeWright's migration leaves a Skyhook and its mirrored NodeWright side
// by side: one rollout, led by the NodeWright. The Skyhook reports the
// NodeWright's status (kstatus reads it Current once done) and deleting it
// uninstalls nothing. Deleting the NodeWright while the Skyhook stays
// hands everything back to the Skyhook, again with nothing run.
func TestMirroredSkyhookAndNodeWrightAreOneRollout(t *testing.T) {
	createNodes(t, simnode.Numbered("mirror", 2, map[string]string{"pool": "mirror"})...)
	c := k8sClient(t)
	ctx := context.Background()
	created := stagePodsOn(t, "mirror-")
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "mirror"}, Spec: twinSpec("mirror", "100ms")}
	nw := &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: "mirror", Annotations: map[string]string{"nodewright.nvidia.com/mirrored-from": "mirror"}},
		Spec: twinSpec("mirror", "100ms")}
	for _, obj := range []client.Object{sk, nw} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(ctx, obj) })
	}
	waitNodeWright(t, "mirror", 2*time.Minute, func(nw *nodewrightv1.NodeWright) bool { return conditions.IsReady(nw) })
	// The status lands in two requests (Flux's patch helper writes the
	// conditions first, then the rest), so the mirror is done when both
	// have: Ready as Superseded and the twin's summary copied.
	mirrored := waitSkyhook(t, "mirror", time.Minute, func(sk *skyhookv1.Skyhook) bool {
		ready := conditions.Get(sk, meta.ReadyCondition)
		return ready != nil && ready.Status == metav1.ConditionTrue && ready.Reason == "Superseded" && sk.Status.Status == skyhookv1.StatusComplete
	})
	if got := kstatusOf(t, mirrored); got != status.CurrentStatus || mirrored.Status.CompleteNodes != "2/2" {
		t.Errorf("the mirrored Skyhook reads %s with %s nodes complete, want Current and 2/2", got, mirrored.Status.CompleteNodes)
	}
	want := []string{"NodeWright/mirror-0/apply", "NodeWright/mirror-0/config", "NodeWright/mirror-1/apply", "NodeWright/mirror-1/config"}
	if got := created(); !slices.Equal(sorted(got), want) {
		t.Errorf("stage pods %v, want one set, the NodeWright's: %v", got, want)
	}
	for _, n := range nodesOf(t, "mirror") {
		if _, ok := n.Annotations["skyhook.nvidia.com/nodeState_mirror"]; ok {
			t.Errorf("node %s has a record of the Skyhook beside the NodeWright's", n.Name)
		}
	}
	// One set of series, the NodeWright's: the superseded Skyhook publishes
	// nothing, and forgetting its own (on each of its reconciles) leaves the
	// NodeWright's of their name.
	twinSeries(t, "NodeWright")

	// Rolled back: the NodeWright goes, the Skyhook stays and takes over.
	if err := c.Delete(ctx, nw); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the NodeWright to be gone", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: "mirror"}, &nodewrightv1.NodeWright{}))
	})
	waitSkyhook(t, "mirror", time.Minute, func(sk *skyhookv1.Skyhook) bool {
		ready := conditions.Get(sk, meta.ReadyCondition)
		return ready != nil && ready.Status == metav1.ConditionTrue && ready.Reason != "Superseded" && sk.Status.CompleteNodes == "2/2"
	})
	for _, n := range nodesOf(t, "mirror") {
		if n.Labels["skyhook.nvidia.com/status_mirror"] != "complete" || n.Annotations["nodewright.nvidia.com/nodeState_mirror"] != "" {
			t.Errorf("node %s after the NodeWright went: labels %v", n.Name, n.Labels)
		}
	}
	if got := created(); len(got) != len(want) {
		t.Errorf("stage pods after the handover back: %v", got)
	}
	twinSeries(t, "")
}

// twinSeries waits until the series of this project's metrics for the
// rollout named mirror are of one kind only (rollout_kind, empty for a
// Skyhook), then checks that NodeWright's gauges of the name say it is
// complete under both names.
func twinSeries(t *testing.T, kind string) {
	t.Helper()
	other := "NodeWright"
	if kind == other {
		other = ""
	}
	eventually(t, "the metrics of mirror to be the "+kind+" rollout's only", func() bool {
		return testenv.MetricSum(t, "skyhook_nodes", map[string]string{"skyhook": "mirror", "rollout_kind": kind, "status": "complete"}) == 2 &&
			testenv.MetricSum(t, "skyhook_nodes", map[string]string{"skyhook": "mirror", "rollout_kind": other}) == -1
	})
	for name, label := range map[string]string{"skyhook_status": "skyhook_name", "nodewright_status": "nodewright_name"} {
		if v := metricValue(t, name, map[string]string{label: "mirror", "status": "complete"}); v != 1 {
			t.Errorf("%s{%s=mirror, status=complete} = %v, want 1", name, label, v)
		}
	}
}

// stagePodsOn records the stage pods created from now on for the nodes
// named with the prefix, as "<owner kind>/<node>/<stage>" in order.
func stagePodsOn(t *testing.T, nodePrefix string) func() []string {
	t.Helper()
	return testenv.PodsCreated(t, env.Clientset, operatorNamespace, func(pod *corev1.Pod) []string {
		if !strings.HasPrefix(pod.Spec.NodeName, nodePrefix) {
			return nil
		}
		kind := "?"
		if owner := metav1.GetControllerOf(pod); owner != nil {
			kind = owner.Kind
		}
		var created []string
		for _, view := range stagepod.Views(pod) { // a pod of several packages once for each
			for _, stage := range stagepod.Stages(view) { // a run's pod once for each of its stages
				created = append(created, kind+"/"+pod.Spec.NodeName+"/"+string(stage))
			}
		}
		return created
	})
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
