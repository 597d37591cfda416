package reconcile

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// runPod is a stage pod of try try running apply then config.
func runPod(name string, try int, configHash string) *corev1.Pod {
	pod := stagePod(name, "1.0.0", skyhookv1.StageApply, try, configHash)
	pod.Annotations[stagepod.StagesAnnotation] = "apply,config"
	return pod
}

func TestARunIsThePodOfEachOfItsStages(t *testing.T) {
	p := pkg("1.0.0")
	sk := skyhookWith(map[string]skyhookv1.Package{"p": p})
	hash := stagepod.ConfigHash(p.ConfigMap)
	run := runPod("run-2", 2, hash)
	config := lifecycle.Step{Action: lifecycle.Run, Stage: skyhookv1.StageConfig, Version: "1.0.0"}
	apply := lifecycle.Step{Action: lifecycle.Run, Stage: skyhookv1.StageApply, Version: "1.0.0"}
	if got := stagePodFor(sk, "p", []*corev1.Pod{run}, config); got != run {
		t.Fatalf("config: %v, want the run", got)
	}
	// The run is apply's third try but config's first: config's own
	// second try is newer, apply's first is not.
	retry := stagePod("config-1", "1.0.0", skyhookv1.StageConfig, 1, hash)
	if got := stagePodFor(sk, "p", []*corev1.Pod{run, retry}, config); got != retry {
		t.Errorf("config: %v, want its retry", got.Name)
	}
	if got := stagePodFor(sk, "p", []*corev1.Pod{stagePod("apply-0", "1.0.0", skyhookv1.StageApply, 0, ""), run}, apply); got != run {
		t.Errorf("apply: %v, want the run (try 2)", got.Name)
	}
	// At the same try, a pod of the stage alone came after the run.
	alone := stagePod("config-0", "1.0.0", skyhookv1.StageConfig, 0, hash)
	if got := stagePodFor(sk, "p", []*corev1.Pod{alone, runPod("run-0", 0, hash)}, config); got != alone {
		t.Errorf("config: %v, want the pod of config alone", got.Name)
	}
}

func TestARunIsFinishedOnceItsLastStageIsRecorded(t *testing.T) {
	sk := skyhookWith(map[string]skyhookv1.Package{"p": pkg("1.0.0")})
	hash := stagepod.ConfigHash(nil)
	for _, tc := range []struct {
		record   skyhookv1.PackageStatus
		finished bool
	}{
		{entry("p", "1.0.0", skyhookv1.StageApply, skyhookv1.StateComplete), false},
		{entry("p", "1.0.0", skyhookv1.StageConfig, skyhookv1.StateInProgress), false},
		{entry("p", "1.0.0", skyhookv1.StageConfig, skyhookv1.StateComplete), true},
	} {
		run := runPod("run", 0, hash)
		w := &nodeWork{state: nodeStateOf(tc.record), pods: map[string][]*corev1.Pod{"p": {run}}, config: map[string]string{"p": hash}}
		if got := len(finishedPods(sk, w)) == 1; got != tc.finished {
			t.Errorf("record %s %s: finished %v, want %v", tc.record.Stage, tc.record.State, got, tc.finished)
		}
	}
}
