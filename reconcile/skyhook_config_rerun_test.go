package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/api/nodestate"
	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
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
	createNodes(t, simnode.Node{Name: "cfgrerun-0", Labels: map[string]string{"pool": "cfgrerun"}})
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

	kindCase{rollouts.Skyhooks, ""}.changeConfigMap(t, "cfgrerun", "driver", "notes.txt", "y")
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

// changeConfigMap sets one key of the package's configMap in the
// rollout's spec.
func (k kindCase) changeConfigMap(t *testing.T, base, pkg, key, value string) {
	t.Helper()
	k.edit(t, base, func(spec *skyhookv1.SkyhookSpec) {
		d := spec.Packages[pkg]
		d.ConfigMap[key] = value
		spec.Packages[pkg] = d
	})
}

// changeDuringInstall rolls a package "logging" whose stages take
// stageTime out on one node <name>-0, changes its configMap's rsyslog.conf
// (which a configInterrupt restarting rsyslog names) once the node's
// record has the install at stage during, in progress, and returns the
// stage pods created until the rollout is Ready.
func (k kindCase) changeDuringInstall(t *testing.T, base, stageTime string, during skyhookv1.Stage) []*corev1.Pod {
	t.Helper()
	name := k.name(base)
	createNodes(t, simnode.Node{Name: name + "-0", Labels: map[string]string{"pool": name}})
	created := stagePodsCreatedOf(t, k.ref(base))
	p := pkg("1.0.0", "ghcr.io/x/logging", nil)
	p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: stageTime}}
	p.ConfigMap = map[string]string{"rsyslog.conf": "a", "notes.txt": "x"}
	p.ConfigInterrupts = map[string]skyhookv1.Interrupt{"rsyslog.conf": {Type: skyhookv1.InterruptService, Services: []string{"rsyslog"}}}
	k.create(t, base, skyhookv1.SkyhookSpec{
		NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}},
		Packages:     skyhookv1.Packages{"logging": p},
	})
	eventually(t, fmt.Sprintf("%s in progress", during), func() bool {
		state, err := nodestate.Read(getNode(t, name+"-0"), k.ref(base))
		e := state[skyhookv1.NodeStateKey("logging", "1.0.0")]
		return err == nil && e.Stage == during && e.State == skyhookv1.StateInProgress
	})
	k.changeConfigMap(t, base, "logging", "rsyslog.conf", "b")
	k.wait(t, base, time.Minute, isReady)
	return created()
}

// checkChangedConfigRuns checks the stage pods of changeDuringInstall: the
// stages want, the last config run with the changed configMap, and the
// interrupt restarting rsyslog, as the changed key's configInterrupt asks.
func checkChangedConfigRuns(t *testing.T, pods []*corev1.Pod, want []string) {
	t.Helper()
	var stages []string
	var podOf []*corev1.Pod // the pod that ran each of stages
	for _, pod := range pods {
		for _, view := range stagepod.Views(pod) {
			for _, stage := range stagepod.Stages(view) {
				stages = append(stages, string(stage))
				podOf = append(podOf, view)
			}
		}
	}
	if !slices.Equal(stages, want) {
		t.Fatalf("stages run %v, want %v", stages, want)
	}
	changed := stagepod.ConfigHash(map[string]string{"rsyslog.conf": "b", "notes.txt": "x"})
	lastConfig := podOf[slices.Index(stages, string(skyhookv1.StageInterrupt))-1]
	if got := lastConfig.Annotations[stagepod.ConfigHashAnnotation]; got != changed {
		t.Errorf("the last config stage ran with configMap %q, want the changed one %q", got, changed)
	}
	interrupt := podOf[slices.Index(stages, string(skyhookv1.StageInterrupt))]
	args := stageContainerOf(interrupt, "logging", skyhookv1.StageInterrupt).Args
	if len(args) == 0 {
		t.Fatalf("the interrupt pod has no interrupt container: %v", interrupt.Spec.InitContainers)
	}
	var in skyhookv1.Interrupt
	if err := json.Unmarshal([]byte(args[len(args)-1]), &in); err != nil || in.Type != skyhookv1.InterruptService || !slices.Equal(in.Services, []string{"rsyslog"}) {
		t.Errorf("interrupt argument %q (%v), want rsyslog restarted", args[len(args)-1], err)
	}
}

// A configMap change that lands while the package is still installing is
// one to interrupt for: the install's config stage runs with the new
// configMap and is followed by the interrupt the changed key's
// configInterrupt asks for, then post-interrupt (NodeWright's
// config-skyhook "update while running", where it runs them once the
// install is done). With a pod per stage the config pod is not created
// yet as apply runs; with runs it is (TestStageRunConfigChangeMidRun).
func TestConfigChangeDuringInstallRunsItsConfigInterrupt(t *testing.T) {
	restartOperator(t, func(o *operator.Options) { o.PodPerStage = true })
	pods := kindCase{rollouts.Skyhooks, ""}.changeDuringInstall(t, "cfginstall", "2s", skyhookv1.StageApply)
	checkChangedConfigRuns(t, pods, []string{"apply", "config", "interrupt", "post-interrupt"})
}

// A configMap change that lands while the install's config stage runs
// (its pod mounts the older configMap) is one to interrupt for too: the
// running config ends first, config runs again with the new configMap, and
// the changed key's configInterrupt follows, then post-interrupt
// (NodeWright's config-skyhook "update while running", when the update
// meets a package at config), for either kind.
func TestConfigChangeDuringConfigStageRunsItsConfigInterrupt(t *testing.T) {
	eachKind(t, func(t *testing.T, k kindCase) {
		pods := k.changeDuringInstall(t, "cfgmid", "3s", skyhookv1.StageConfig)
		checkChangedConfigRuns(t, pods, []string{"apply", "config", "config", "interrupt", "post-interrupt"})
	})
}

// The interrupt decided as a config stage starts for a changed configMap
// is on its pod as well as in the node's record: a record that lost it (a
// write that did not land as the operator stopped, or one a pass reading an
// older record replaced) gets it back from the pod, and the changed key's
// configInterrupt still follows.
func TestConfigInterruptSurvivesALostRecord(t *testing.T) {
	k := kindCase{rollouts.Skyhooks, ""}
	name := k.name("cfglost")
	createNodes(t, simnode.Node{Name: name + "-0", Labels: map[string]string{"pool": name}})
	created := stagePodsCreatedOf(t, k.ref("cfglost"))
	p := pkg("1.0.0", "ghcr.io/x/logging", nil)
	p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "3s"}}
	p.ConfigMap = map[string]string{"rsyslog.conf": "a", "notes.txt": "x"}
	p.ConfigInterrupts = map[string]skyhookv1.Interrupt{"rsyslog.conf": {Type: skyhookv1.InterruptService, Services: []string{"rsyslog"}}}
	k.create(t, "cfglost", skyhookv1.SkyhookSpec{
		NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}},
		Packages:     skyhookv1.Packages{"logging": p},
	})
	eventually(t, "the install's run", func() bool { return len(created()) == 1 })
	k.changeConfigMap(t, "cfglost", "logging", "rsyslog.conf", "b")
	var recorded map[string]string
	eventually(t, "the rerun's config pod and the record carrying its interrupt", func() bool {
		pods := created()
		if len(pods) != 2 {
			return false
		}
		_, onPod := pods[1].Annotations[stagepod.ConfigInterruptAnnotation]
		recorded = nil
		_ = json.Unmarshal([]byte(getNode(t, name+"-0").Annotations[skyhookv1.ConfigAnnotation(name)]), &recorded)
		_, inRecord := recorded["logging/rerun"]
		return onPod && inRecord
	})
	// The record as it was before the config stage started: no decision.
	lost, _ := json.Marshal(map[string]string{"logging": recorded["logging"]})
	if err := patchNode(context.Background(), k8sClient(t), name+"-0", false, map[string]any{skyhookv1.ConfigAnnotation(name): string(lost)}); err != nil {
		t.Fatal(err)
	}
	k.wait(t, "cfglost", time.Minute, isReady)
	// The run's config (the older configMap), then the rerun's.
	checkChangedConfigRuns(t, created(), []string{"apply", "config", "config", "interrupt", "post-interrupt"})
}
