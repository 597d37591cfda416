package reconcile_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// A configMap change of a key no configInterrupt names, on a package with
// an interrupt of its own, reruns config and stops there: the record stays
// at config, complete, and neither the package's interrupt nor a reboot
// follows, then or in any later pass (NodeWright's config-skyhook
// "no-interrupt update").
func TestConfigRerunWithoutInterruptStaysAtConfig(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	createNodes(t, cluster.Node{Name: "cfgrerun-0", Labels: map[string]string{"pool": "cfgrerun"}})
	created := countStagePods(t, "cfgrerun")
	p := withInterrupt(pkg("1.0.0", "ghcr.io/x/driver", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot})
	p.ConfigMap = map[string]string{"driver.conf": "a", "notes.txt": "x"}
	p.ConfigInterrupts = map[string]skyhookv1.Interrupt{"driver.conf": {Type: skyhookv1.InterruptService, Services: []string{"driver"}}}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "cfgrerun"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "cfgrerun"}},
			Packages:     skyhookv1.Packages{"driver": p},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "cfgrerun", time.Minute, isReady)
	eventually(t, "the install's reboot", func() bool { return hosts.Reboots()["cfgrerun-0"] == 1 })

	eventually(t, "the configMap change to apply", func() bool {
		var cur skyhookv1.Skyhook
		if err := c.Get(ctx, client.ObjectKey{Name: "cfgrerun"}, &cur); err != nil {
			return false
		}
		d := cur.Spec.Packages["driver"]
		d.ConfigMap["notes.txt"] = "y"
		cur.Spec.Packages["driver"] = d
		return c.Update(ctx, &cur) == nil
	})
	eventually(t, "the config rerun", func() bool { return created()["cfgrerun-0/config"] == 2 })
	waitSkyhook(t, "cfgrerun", time.Minute, isReady)
	time.Sleep(2 * time.Second) // passes after the rerun must not start the interrupt
	runs := created()
	if r := hosts.Reboots()["cfgrerun-0"]; r != 1 || runs["cfgrerun-0/interrupt"] != 1 || runs["cfgrerun-0/post-interrupt"] != 1 {
		t.Errorf("after a change of notes.txt: %d reboots, pods %v; want only the install's reboot, interrupt and post-interrupt", r, runs)
	}
	var state skyhookv1.NodeState
	if err := json.Unmarshal([]byte(getNode(t, "cfgrerun-0").Annotations[skyhookv1.NodeStateAnnotation("cfgrerun")]), &state); err != nil {
		t.Fatal(err)
	}
	if e := state["driver|1.0.0"]; e.Stage != skyhookv1.StageConfig || e.State != skyhookv1.StateComplete {
		t.Errorf("driver's record after the rerun: stage %s, state %s; want config, complete", e.Stage, e.State)
	}
	if !isReady(waitSkyhook(t, "cfgrerun", time.Second, func(*skyhookv1.Skyhook) bool { return true })) {
		t.Error("not Ready after the rerun")
	}
}

// A configMap change that lands while the package is still installing is
// one to interrupt for: the install's config stage runs with the new
// configMap and is followed by the interrupt the changed key's
// configInterrupt asks for, then post-interrupt (NodeWright's
// config-skyhook "update while running", where it runs them once the
// install is done).
func TestConfigChangeDuringInstallRunsItsConfigInterrupt(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	createNodes(t, cluster.Node{Name: "cfginstall-0", Labels: map[string]string{"pool": "cfginstall"}})
	created := stagePodsCreated(t, "cfginstall")
	p := pkg("1.0.0", "ghcr.io/x/logging", nil)
	p.Env = []corev1.EnvVar{{Name: cluster.SimDurationEnv, Value: "2s"}}
	p.ConfigMap = map[string]string{"rsyslog.conf": "a", "notes.txt": "x"}
	p.ConfigInterrupts = map[string]skyhookv1.Interrupt{"rsyslog.conf": {Type: skyhookv1.InterruptService, Services: []string{"rsyslog"}}}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "cfginstall"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "cfginstall"}},
			Packages:     skyhookv1.Packages{"logging": p},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	eventually(t, "the apply pod", func() bool { return len(created()) == 1 })
	eventually(t, "the configMap change to apply", func() bool {
		var cur skyhookv1.Skyhook
		if err := c.Get(ctx, client.ObjectKey{Name: "cfginstall"}, &cur); err != nil {
			return false
		}
		d := cur.Spec.Packages["logging"]
		d.ConfigMap["rsyslog.conf"] = "b"
		cur.Spec.Packages["logging"] = d
		return c.Update(ctx, &cur) == nil
	})
	waitSkyhook(t, "cfginstall", time.Minute, isReady)

	var stages []string
	var in skyhookv1.Interrupt
	for _, pod := range created() {
		stage := pod.Labels[stagepod.StageLabel]
		stages = append(stages, stage)
		if stage == string(skyhookv1.StageInterrupt) {
			args := pod.Spec.InitContainers[1].Args
			if err := json.Unmarshal([]byte(args[len(args)-1]), &in); err != nil {
				t.Errorf("interrupt argument %q: %v", args[len(args)-1], err)
			}
		}
	}
	if want := []string{"apply", "config", "interrupt", "post-interrupt"}; !slices.Equal(stages, want) {
		t.Errorf("stage pods %v, want %v", stages, want)
	}
	if in.Type != skyhookv1.InterruptService || !slices.Equal(in.Services, []string{"rsyslog"}) {
		t.Errorf("interrupt %+v, want rsyslog restarted", in)
	}
	if cfg := created()[1]; cfg.Annotations[stagepod.ConfigHashAnnotation] != stagepod.ConfigHash(map[string]string{"rsyslog.conf": "b", "notes.txt": "x"}) {
		t.Errorf("the config stage ran with configMap %q, want the changed one", cfg.Annotations[stagepod.ConfigHashAnnotation])
	}
}

// A configMap change that lands while the install's config stage runs
// (its pod mounts the older configMap) is one to interrupt for too: the
// running config ends first, config runs again with the new configMap, and
// the changed key's configInterrupt follows, then post-interrupt
// (NodeWright's config-skyhook "update while running", when the update
// meets a package at config).
func TestConfigChangeDuringConfigStageRunsItsConfigInterrupt(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	createNodes(t, cluster.Node{Name: "cfgmid-0", Labels: map[string]string{"pool": "cfgmid"}})
	created := stagePodsCreated(t, "cfgmid")
	p := pkg("1.0.0", "ghcr.io/x/logging", nil)
	p.Env = []corev1.EnvVar{{Name: cluster.SimDurationEnv, Value: "3s"}}
	p.ConfigMap = map[string]string{"rsyslog.conf": "a"}
	p.ConfigInterrupts = map[string]skyhookv1.Interrupt{"rsyslog.conf": {Type: skyhookv1.InterruptService, Services: []string{"rsyslog"}}}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "cfgmid"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "cfgmid"}},
			Packages:     skyhookv1.Packages{"logging": p},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	eventually(t, "the config pod", func() bool { return len(created()) == 2 })
	eventually(t, "the configMap change to apply", func() bool {
		var cur skyhookv1.Skyhook
		if err := c.Get(ctx, client.ObjectKey{Name: "cfgmid"}, &cur); err != nil {
			return false
		}
		d := cur.Spec.Packages["logging"]
		d.ConfigMap["rsyslog.conf"] = "b"
		cur.Spec.Packages["logging"] = d
		return c.Update(ctx, &cur) == nil
	})
	waitSkyhook(t, "cfgmid", time.Minute, isReady)

	var stages []string
	for _, pod := range created() {
		stages = append(stages, pod.Labels[stagepod.StageLabel])
	}
	if want := []string{"apply", "config", "config", "interrupt", "post-interrupt"}; !slices.Equal(stages, want) {
		t.Fatalf("stage pods %v, want %v: the config with the new configMap, then its configInterrupt", stages, want)
	}
	changed := stagepod.ConfigHash(map[string]string{"rsyslog.conf": "b"})
	if cfg := created()[2]; cfg.Annotations[stagepod.ConfigHashAnnotation] != changed {
		t.Errorf("the second config ran with configMap %q, want the changed one %q", cfg.Annotations[stagepod.ConfigHashAnnotation], changed)
	}
	args := created()[3].Spec.InitContainers[1].Args
	var in skyhookv1.Interrupt
	if err := json.Unmarshal([]byte(args[len(args)-1]), &in); err != nil || in.Type != skyhookv1.InterruptService || !slices.Equal(in.Services, []string{"rsyslog"}) {
		t.Errorf("interrupt argument %q (%v), want rsyslog restarted", args[len(args)-1], err)
	}
}
