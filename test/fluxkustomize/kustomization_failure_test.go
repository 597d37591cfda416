package fluxkustomize

import (
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// A push whose package fails on a node fails the Kustomization's health
// check: the Skyhook stalls, kstatus (the failed expression) reads it as
// Failed, and the Kustomization is Ready=False naming it, with the last
// healthy revision still the applied one; flux get prints that.
func TestFailedRolloutFailsTheHealthCheck(t *testing.T) {
	const name = "gpu-failure"
	files := func(version string, env map[string]string) map[string]string {
		return map[string]string{
			"policies/halt.yaml": policyYAML("halt-at-first-failure"),
			"skyhooks/gpu.yaml":  skyhookYAML(name, failurePool, "deploymentPolicy: halt-at-first-failure", version, env),
		}
	}
	f, good := newFleet(t, "failure", files("1.0.0", stageTime("200ms")), name)
	waitReady(t, f, good, 2*time.Minute)

	// The first node of the upgrade's first batch fails its stage.
	bad := f.push(t, files("1.1.0", map[string]string{
		simnode.DurationEnv: "200ms", simnode.ExitCodeEnv: "3", simnode.ExitNodesEnv: failurePool + "-0",
	}), "fails on one node")
	var ready metav1.Condition
	testenv.Eventually(t, "the Kustomization's health check to fail", 3*time.Minute, func() bool {
		st := f.kustomization(t)
		ready = condition(st.Conditions, meta.ReadyCondition)
		return st.LastAttemptedRevision == "main@sha1:"+bad && ready.Reason == meta.HealthCheckFailedReason
	})
	t.Logf("Ready=%s %s: %s", ready.Status, ready.Reason, ready.Message)
	if ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, "health check failed after ") ||
		!strings.Contains(ready.Message, "failed early due to stalled resources: [Skyhook/"+name+" status: 'Failed']") {
		t.Errorf("Ready=False %s %q; want the health check failed early on Skyhook/%s", ready.Reason, ready.Message, name)
	}
	sk := getSkyhook(t, name)
	if !conditions.IsStalled(sk) {
		t.Errorf("the Skyhook is not Stalled: %+v", sk.Status.Conditions)
	}
	t.Logf("the Skyhook: Ready=False %s: %s", conditions.GetReason(sk, meta.ReadyCondition), conditions.GetMessage(sk, meta.ReadyCondition))

	testenv.Eventually(t, "flux get to show the failed health check", time.Minute, func() bool {
		row, out := fluxGetKustomization(t, f)
		if row["READY"] != "False" || !strings.Contains(row["MESSAGE"], "Skyhook/"+name+" status: 'Failed'") {
			return false // a retry running the health checks again
		}
		t.Logf("flux get kustomizations -A:\n%s", out)
		if row["REVISION"] != revision(good) {
			t.Errorf("REVISION %q; want the last healthy revision %s", row["REVISION"], revision(good))
		}
		return true
	})
}
