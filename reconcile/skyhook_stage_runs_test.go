package reconcile_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// An install's config runs in the pod of its apply: one
// pod, its stages' containers in order, and the node's record still goes
// stage by stage (apply in progress, then config in progress, then config
// complete), as NodeWright's node keys and the status read it.
func TestStageRunIsOnePodRecordedStageByStage(t *testing.T) {
	created, history := stageRunRollout(t, "runone", nil)
	waitSkyhook(t, "runone", time.Minute, isReady)
	pods := created()
	if got := podStages(pods); !slices.Equal(got, []string{"apply,config"}) {
		t.Fatalf("stage pods %v, want one pod for apply and config", got)
	}
	var seen []string
	for _, state := range history() {
		e := state["tuning|1.0.0"]
		step := string(e.Stage) + " " + string(e.State)
		if len(seen) == 0 || seen[len(seen)-1] != step {
			seen = append(seen, step)
		}
	}
	for _, want := range []string{"apply in_progress", "config in_progress", "config complete"} {
		if !slices.Contains(seen, want) {
			t.Errorf("the record went %v; want it to say %q on the way", seen, want)
		}
	}
}

// --stage-runs=false gives each stage a pod of its own, as before runs.
func TestPodPerStageRunsApplyAndConfigApart(t *testing.T) {
	restartOperator(t, func(o *operator.Options) { o.PodPerStage = true })
	created, _ := oneNodeRolloutOf(t, "runapart", func(tuning *skyhookv1.Package) {
		tuning.ConfigMap = map[string]string{"tuning.conf": "a"}
	})
	waitSkyhook(t, "runapart", time.Minute, isReady)
	if got := podStages(created()); !slices.Equal(got, []string{"apply", "config"}) {
		t.Errorf("stage pods %v, want apply and config apart", got)
	}
}

// A stage that fails in a run stops the pod there: the stages before it
// stay complete, and its retry is a pod of that stage alone, so apply
// never runs again.
func TestStageRunFailureRetriesOnlyTheFailedStage(t *testing.T) {
	created, history := stageRunRollout(t, "runfail", []corev1.EnvVar{
		{Name: simnode.ExitCodeEnv, Value: "3"}, {Name: simnode.ExitContainersEnv, Value: "tuning-config"}})
	eventually(t, "config's retry", func() bool { return len(created()) >= 2 })
	entry := packageEntry(t, "runfail-0", "runfail", "tuning", "1.0.0")
	if entry.Stage != skyhookv1.StageConfig {
		t.Errorf("after config failed the record is at %s, want config (apply stays complete)", entry.Stage)
	}
	kindCase{rollouts.Skyhooks, ""}.edit(t, "runfail", func(spec *skyhookv1.SkyhookSpec) {
		p := spec.Packages["tuning"]
		p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1s"}}
		spec.Packages["tuning"] = p
	})
	waitSkyhook(t, "runfail", time.Minute, isReady)
	got := podStages(created())
	if got[0] != "apply,config" || slices.Contains(got[1:], "apply,config") || slices.Contains(got[1:], "apply") {
		t.Errorf("stage pods %v: want the run, then config alone (apply never again)", got)
	}
	for i, state := range history() {
		if e := state["tuning|1.0.0"]; e.Stage == skyhookv1.StageApply && e.State == skyhookv1.StateErroring {
			t.Errorf("record %d has apply erroring: %+v", i, e)
		}
	}
}

// A run's pod deleted once its apply is recorded, while config runs: config
// runs again in a pod of its own; apply does not.
func TestStageRunPodDeletedMidRunRerunsOnlyWhatWasNotDone(t *testing.T) {
	created, _ := stageRunRollout(t, "rundel", nil)
	c := k8sClient(t)
	ctx := context.Background()
	eventually(t, "apply recorded complete, config running", func() bool {
		e := packageEntry(t, "rundel-0", "rundel", "tuning", "1.0.0")
		return e.Stage == skyhookv1.StageConfig && e.State == skyhookv1.StateInProgress
	})
	run := created()[0]
	if err := c.Delete(ctx, run, client.Preconditions{UID: &run.UID}); err != nil {
		t.Fatal(err)
	}
	waitSkyhook(t, "rundel", time.Minute, isReady)
	if got := podStages(created()); !slices.Equal(got, []string{"apply,config", "config"}) {
		t.Errorf("stage pods %v, want the run, then config alone", got)
	}
}

// The operator stopped while a run's config runs: the new one follows the
// same pod to its end, and nothing runs twice.
func TestStageRunSurvivesAnOperatorRestart(t *testing.T) {
	created, _ := stageRunRollout(t, "runrestart", nil)
	eventually(t, "config running in the run", func() bool {
		e := packageEntry(t, "runrestart-0", "runrestart", "tuning", "1.0.0")
		return e.Stage == skyhookv1.StageConfig && e.State == skyhookv1.StateInProgress
	})
	restartOperator(t)
	waitSkyhook(t, "runrestart", time.Minute, isReady)
	if got := podStages(created()); !slices.Equal(got, []string{"apply,config"}) {
		t.Errorf("stage pods %v, want the one run", got)
	}
}

// A configMap change while the run's apply runs: the run's config (with
// the older configMap) is not recorded as the install's; config runs again
// with the new one, and the changed key's configInterrupt follows.
func TestStageRunConfigChangeMidRun(t *testing.T) {
	pods := kindCase{rollouts.Skyhooks, ""}.changeDuringInstall(t, "runcfg", "2s", skyhookv1.StageApply)
	// The run's config (the older configMap), then the rerun's.
	checkChangedConfigRuns(t, pods, []string{"apply", "config", "config", "interrupt", "post-interrupt"})
	if got := podStages(pods); got[0] != "apply,config" {
		t.Errorf("stage pods %v, want the install's run first", got)
	}
}

// stageRunRollout rolls a
// Skyhook <name> with one package, tuning 1.0.0 (each stage 1 s, env
// added), with a configMap, onto one node <name>-0.
func stageRunRollout(t *testing.T, name string, env []corev1.EnvVar) (func() []*corev1.Pod, func() []skyhookv1.NodeState) {
	t.Helper()
	return oneNodeRolloutOf(t, name, func(tuning *skyhookv1.Package) {
		tuning.Env = append([]corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1s"}}, env...)
		tuning.ConfigMap = map[string]string{"tuning.conf": "a"}
	})
}

// podStages are the stages each pod runs, comma separated, in order.
func podStages(pods []*corev1.Pod) []string {
	var out []string
	for _, pod := range pods {
		var stages []string
		for _, s := range stagepod.Stages(pod) {
			stages = append(stages, string(s))
		}
		out = append(out, strings.Join(stages, ","))
	}
	return out
}
