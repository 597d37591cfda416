package reconcile

import (
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

func stagePod(name, version string, stage skyhookv1.Stage, try int, configHash string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{stagepod.StageLabel: string(stage)},
		Annotations: map[string]string{stagepod.VersionAnnotation: version, stagepod.AttemptAnnotation: strconv.Itoa(try),
			stagepod.ConfigHashAnnotation: configHash},
	}}
}

func TestStagePodForIsTheNewestTryOfTheStep(t *testing.T) {
	p := pkg("1.0.0")
	p.ConfigMap = map[string]string{"k": "v"}
	sk := skyhookWith(map[string]skyhookv1.Package{"p": p})
	hash := stagepod.ConfigHash(p.ConfigMap)
	pods := []*corev1.Pod{
		stagePod("apply-0", "1.0.0", skyhookv1.StageApply, 0, ""),
		stagePod("apply-2", "1.0.0", skyhookv1.StageApply, 2, ""),
		stagePod("apply-1", "1.0.0", skyhookv1.StageApply, 1, ""),
		stagePod("apply-old", "0.9.0", skyhookv1.StageApply, 5, ""),
		stagePod("config-stale", "1.0.0", skyhookv1.StageConfig, 3, "an older hash"),
		stagePod("config-0", "1.0.0", skyhookv1.StageConfig, 0, hash),
	}
	apply := lifecycle.Step{Action: lifecycle.Run, Stage: skyhookv1.StageApply, Version: "1.0.0"}
	if got := stagePodFor(sk, "p", pods, apply); got == nil || got.Name != "apply-2" {
		t.Fatalf("apply: %v, want apply-2", got)
	}
	config := lifecycle.Step{Action: lifecycle.Run, Stage: skyhookv1.StageConfig, Version: "1.0.0"}
	if got := stagePodFor(sk, "p", pods, config); got == nil || got.Name != "config-0" {
		t.Fatalf("config: %v, want config-0 (the pod of the declared configMap)", got)
	}
	upgrade := lifecycle.Step{Action: lifecycle.Run, Stage: skyhookv1.StageUpgrade, Version: "1.0.0"}
	if got := stagePodFor(sk, "p", pods, upgrade); got != nil {
		t.Fatalf("upgrade: %v, want none", got.Name)
	}
}

func TestFinishedPodsAreTheOnesBehindTheRecord(t *testing.T) {
	sk := skyhookWith(map[string]skyhookv1.Package{"p": pkg("1.0.0")})
	applied := stagePod("apply", "1.0.0", skyhookv1.StageApply, 0, "")
	configuring := stagePod("config", "1.0.0", skyhookv1.StageConfig, 0, stagepod.ConfigHash(nil))
	w := &nodeWork{
		state:  nodeStateOf(entry("p", "1.0.0", skyhookv1.StageConfig, skyhookv1.StateInProgress)),
		pods:   map[string][]*corev1.Pod{"p": {applied, configuring}},
		config: map[string]string{},
	}
	finished := finishedPods(sk, w)
	if len(finished) != 1 || finished[0] != applied {
		t.Fatalf("finished %v, want only the apply pod (the record moved past it)", finished)
	}
	if len(w.pods["p"]) != 1 || w.pods["p"][0] != configuring {
		t.Fatalf("kept %v, want the config pod (its stage runs)", w.pods["p"])
	}
}

func TestBackoffDoublesFromFiveSecondsToFiveMinutes(t *testing.T) {
	for attempt, want := range map[int32]time.Duration{0: 5 * time.Second, 1: 10 * time.Second, 3: 40 * time.Second, 6: 5 * time.Minute, 30: 5 * time.Minute} {
		if got := backoff(attempt); got != want {
			t.Errorf("backoff(%d) = %s, want %s", attempt, got, want)
		}
	}
}
