package fluxkustomize

import (
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/test/testenv"
)

// A Kustomization that health checks its Skyhook as docs/api.md says is
// not Ready while the nodes roll, its health checks running, and Ready
// with the applied revision once every node is complete, not before; flux
// get kustomizations prints both.
func TestKustomizationIsReadyOnceEveryNodeIsComplete(t *testing.T) {
	const name = "gpu-rollout"
	// 3 nodes one at a time, each with two stages (apply, config) of 1.5 s.
	f, commit := newFleet(t, "rollout", map[string]string{
		"skyhooks/gpu.yaml": skyhookYAML(name, rolloutPool, oneAtATime, "1.0.0", stageTime("1500ms")),
	}, name)

	start := time.Now()
	testenv.Eventually(t, "flux get to show the Kustomization not Ready while the nodes roll", 2*time.Minute, func() bool {
		row, out := fluxGetKustomization(t, f)
		sk := getSkyhook(t, name)
		if !conditions.IsReconciling(sk) {
			if row["READY"] == "True" && !conditions.IsReady(sk) {
				t.Fatalf("Ready before the rollout ended:\n%s", out)
			}
			return false // not rolling yet, or over before flux was asked
		}
		healthy := condition(f.kustomization(t).Conditions, meta.HealthyCondition)
		if row["READY"] == "True" || !strings.Contains(row["MESSAGE"], "in progress") ||
			healthy.Status != metav1.ConditionUnknown || !strings.Contains(healthy.Message, "Running health checks for revision main@sha1:"+commit) {
			return false
		}
		t.Logf("while %s nodes are complete, %d in progress:\n%s(Healthy: %s)", sk.Status.CompleteNodes, sk.Status.NodesInProgress, out, healthy.Message)
		return true
	})

	row, out := waitReady(t, f, commit, 3*time.Minute)
	t.Logf("after %s:\n%s", time.Since(start).Round(time.Second), out)
	if want := "Applied revision: " + revision(commit); row["MESSAGE"] != want {
		t.Errorf("MESSAGE %q, want %q", row["MESSAGE"], want)
	}
	sk := getSkyhook(t, name)
	if !conditions.IsReady(sk) || sk.Status.CompleteNodes != "3/3" {
		t.Fatalf("the Kustomization is Ready but the Skyhook is not complete: %s, %+v", sk.Status.CompleteNodes, sk.Status.Conditions)
	}
	ready := condition(f.kustomization(t).Conditions, meta.ReadyCondition)
	if done := conditions.Get(sk, meta.ReadyCondition).LastTransitionTime; ready.LastTransitionTime.Before(&done) {
		t.Errorf("the Kustomization became Ready at %s, before the Skyhook at %s", ready.LastTransitionTime, done)
	}
}
