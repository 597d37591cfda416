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
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/snapshot"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// uninstallable is a package that declares uninstall support, with an env
// and configMap of its own for the uninstall to run with.
func uninstallable(version string) skyhookv1.Package {
	p := pkg(version, "ghcr.io/x/driver", nil)
	p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1s"}, {Name: "MODE", Value: "driver"}}
	p.ConfigMap = map[string]string{"driver.conf": "on"}
	p.Interrupt = &skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: []string{"containerd"}}
	p.Uninstall = &skyhookv1.Uninstall{Enabled: true}
	return p
}

// Explicit uninstall, as NodeWright has it: a package with
// uninstall.enabled cannot be removed before it is uninstalled;
// uninstall.apply runs its uninstall (with its own env and configMap) and
// then its interrupt on every node, and it leaves the records; a package
// that depends on it is reported Blocked; then it may be removed.
func TestExplicitUninstall(t *testing.T) {
	createNodes(t, simnode.Numbered("uninstall", 2, map[string]string{"pool": "uninstall"})...)
	c := k8sClient(t)
	ctx := context.Background()
	history := recordHistory(t, "uninstall-0", "uninstall")
	uninstalls := uninstallPods(t, "uninstall")
	created := countStagePods(t, "uninstall")
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "uninstall"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "uninstall"}},
			Packages: skyhookv1.Packages{
				"driver": uninstallable("1.0.0"),
				"tools":  pkg("1.0.0", "ghcr.io/x/tools", map[string]string{"driver": "1.0.0"}),
			},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "uninstall", time.Minute, isReady)

	update := func(change func(*skyhookv1.Skyhook)) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
			t.Fatal(err)
		}
		change(sk)
		return c.Update(ctx, sk)
	}
	removeDriver := func(s *skyhookv1.Skyhook) {
		delete(s.Spec.Packages, "driver")
		tools := s.Spec.Packages["tools"]
		tools.DependsOn = nil
		s.Spec.Packages["tools"] = tools
	}
	err := update(removeDriver)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.packages.driver: Forbidden: the package declares uninstall support (uninstall.enabled=true)") {
		t.Fatalf("removing a package with uninstall support before its uninstall: %v, want refused naming spec.packages.driver", err)
	}

	if err := update(func(s *skyhookv1.Skyhook) {
		d := s.Spec.Packages["driver"]
		d.Uninstall.Apply = true
		s.Spec.Packages["driver"] = d
	}); err != nil {
		t.Fatal(err)
	}
	during := waitSkyhook(t, "uninstall", time.Minute, func(s *skyhookv1.Skyhook) bool {
		return conditions.IsTrue(s, skyhookv1.UninstallInProgressCondition)
	})
	if r := conditions.GetReason(during, skyhookv1.BlockedCondition); r != "DependencyUninstalled" ||
		!strings.Contains(conditions.GetMessage(during, skyhookv1.BlockedCondition), "package tools depends on driver") {
		t.Errorf("Blocked condition %q %q, want DependencyUninstalled naming tools and driver", r, conditions.GetMessage(during, skyhookv1.BlockedCondition))
	}
	done := waitSkyhook(t, "uninstall", time.Minute, isReady)
	if conditions.Has(done, skyhookv1.UninstallInProgressCondition) {
		t.Errorf("UninstallInProgress still set once Ready: %+v", conditions.Get(done, skyhookv1.UninstallInProgressCondition))
	}

	var stages []skyhookv1.Stage
	for _, s := range history() {
		if e, ok := s["driver|1.0.0"]; ok && (len(stages) == 0 || stages[len(stages)-1] != e.Stage) {
			stages = append(stages, e.Stage)
		}
	}
	if got := stageList(stages); !strings.HasSuffix(got, "post-interrupt,uninstall,uninstall-interrupt") {
		t.Errorf("driver went through %s, want its install, then uninstall and uninstall-interrupt", got)
	}
	if n := created()["uninstall-0/uninstall-interrupt"]; n != 1 {
		t.Errorf("%d uninstall-interrupt pods on uninstall-0, want 1", n)
	}
	if pod := uninstalls()["driver"]; pod == nil {
		t.Error("no uninstall pod of driver seen")
	} else if envValue(stageContainerOf(pod, "driver", skyhookv1.StageUninstall), "MODE") != "driver" || !mounts(pod, snapshot.Name(skyhookv1.Skyhooks.Named("uninstall"), "driver", "1.0.0")) {
		t.Errorf("the uninstall ran without the package's env or configMap: %+v", pod.Spec)
	}
	for _, name := range []string{"uninstall-0", "uninstall-1"} {
		var node corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
			t.Fatal(err)
		}
		if got := node.Annotations[skyhookv1.NodeStateAnnotation("uninstall")]; strings.Contains(got, "driver") || !strings.Contains(got, "tools|1.0.0") {
			t.Errorf("%s record %s: want driver gone (uninstalled) and tools kept", name, got)
		}
	}

	if err := update(removeDriver); err != nil {
		t.Fatalf("removing the uninstalled package: %v", err)
	}
	waitSkyhook(t, "uninstall", time.Minute, func(s *skyhookv1.Skyhook) bool {
		return isReady(s) && s.Status.PackageList == "tools:1.0.0" && !conditions.Has(s, skyhookv1.BlockedCondition)
	})
}

// Deleting a Skyhook uninstalls its packages with uninstall support from
// every node before the finalizer (NodeWright's) goes; the records of the
// others stay on the node.
func TestDeleteUninstallsPackagesWithUninstallSupport(t *testing.T) {
	createNodes(t, simnode.Numbered("delete", 1, map[string]string{"pool": "delete"})...)
	c := k8sClient(t)
	ctx := context.Background()
	uninstalls := uninstallPods(t, "delete")
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "delete"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "delete"}},
			Packages:     skyhookv1.Packages{"driver": uninstallable("1.0.0"), "extra": pkg("1.0.0", "ghcr.io/x/extra", nil)},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	ready := waitSkyhook(t, "delete", time.Minute, isReady)
	if got := ready.Finalizers; len(got) != 1 || got[0] != "skyhook.nvidia.com/skyhook" {
		t.Errorf("finalizers %v, want NodeWright's skyhook.nvidia.com/skyhook", got)
	}
	if err := c.Delete(ctx, sk); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Skyhook to be gone", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: "delete"}, &skyhookv1.Skyhook{}))
	})
	pods := uninstalls()
	if pods["driver"] == nil || pods["extra"] != nil {
		t.Errorf("uninstall pods %v: want one for driver (uninstall.enabled) and none for extra", keys(pods))
	}
	var node corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: "delete-0"}, &node); err != nil {
		t.Fatal(err)
	}
	want := `{"extra|1.0.0":{"name":"extra","version":"1.0.0","image":"ghcr.io/x/extra","stage":"config","state":"complete"}}`
	if got := node.Annotations[skyhookv1.NodeStateAnnotation("delete")]; got != want {
		t.Errorf("record left on the node %q, want only extra's %s", got, want)
	}
	if _, ok := node.Labels[skyhookv1.StatusKey("delete")]; ok || node.Spec.Unschedulable {
		t.Errorf("status label or cordon left: labels %v, unschedulable %v", node.Labels, node.Spec.Unschedulable)
	}
	for _, cond := range node.Status.Conditions {
		if strings.HasPrefix(string(cond.Type), "skyhook.nvidia.com/delete/") {
			t.Errorf("node condition %s left after the Skyhook was deleted", cond.Type)
		}
	}
}

func stageList(stages []skyhookv1.Stage) string {
	parts := make([]string, len(stages))
	for i, s := range stages {
		parts[i] = string(s)
	}
	return strings.Join(parts, ",")
}

func mounts(pod *corev1.Pod, configMap string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == configMap {
			return true
		}
	}
	return false
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// stageContainerOf is the pod's container that runs the package's stage
// (an empty one when it has none): found by name, as a pod may or may not
// have a copy container before it.
func stageContainerOf(pod *corev1.Pod, pkg string, stage skyhookv1.Stage) corev1.Container {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == stagepod.StageContainer(pkg, stage) {
			return c
		}
	}
	return corev1.Container{}
}
