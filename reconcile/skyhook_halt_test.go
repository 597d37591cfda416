package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// A batch below batchThreshold before the safety limit halts the
// compartment at failureThreshold: RolloutHalted, Stalled, an event, and no
// node outside the failed batch touched. A fix of the spec lifts the halt
// and the rollout completes, after which the batch state starts over.
func TestFailedBatchHaltsTheRolloutUntilTheSpecChanges(t *testing.T) {
	createNodes(t, simnode.Numbered("halt", 6, map[string]string{"pool": "halt"})...)
	c := k8sClient(t)
	ctx := context.Background()
	createPolicyYAML(t, `
metadata: {name: halting}
spec:
  default:
    budget: {count: 3}
    strategy: {linear: {initialBatch: 2, delta: 1, batchThreshold: 100, failureThreshold: 1, safetyLimit: 50}}
`)
	p := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	// The first batch is halt-0 and halt-1 (name order); the agent fails
	// on halt-1 only.
	p.Env = []corev1.EnvVar{{Name: simnode.ExitCodeEnv, Value: "9"}, {Name: simnode.ExitNodesEnv, Value: "halt-1"}}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "halt"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:     metav1.LabelSelector{MatchLabels: map[string]string{"pool": "halt"}},
			DeploymentPolicy: "halting",
			Packages:         skyhookv1.Packages{"tuning": p},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })

	// The patch helper writes the conditions before the other status
	// fields: wait for both.
	got := waitSkyhook(t, "halt", time.Minute, func(sk *skyhookv1.Skyhook) bool {
		return conditions.IsStalled(sk) && len(sk.Status.Compartments) == 1 && sk.Status.Compartments[0].Halted
	})
	if k := kstatusOf(t, got); k != "Failed" {
		t.Errorf("kstatus reads a halted rollout as %s, want Failed", k)
	}
	if !conditions.IsTrue(got, skyhookv1.RolloutHaltedCondition) || conditions.GetReason(got, meta.ReadyCondition) != "RolloutHalted" {
		t.Errorf("conditions %+v; want RolloutHalted and Ready=False for it", got.Status.Conditions)
	}
	if msg := conditions.GetMessage(got, skyhookv1.RolloutHaltedCondition); !strings.Contains(msg, "__default__") || !strings.Contains(msg, "halting") {
		t.Errorf("halt message %q does not name the compartment and policy", msg)
	}
	if len(got.Status.Compartments) != 1 || !got.Status.Compartments[0].Halted || got.Status.Compartments[0].ConsecutiveFailures != 1 {
		t.Errorf("compartments %+v; want the default compartment halted after 1 failure", got.Status.Compartments)
	}
	if metricValue(t, "skyhook_compartment_halted", map[string]string{"skyhook": "halt", "compartment": "__default__"}) != 1 ||
		metricValue(t, "skyhook_compartment_consecutive_failures", map[string]string{"skyhook": "halt", "compartment": "__default__"}) != 1 {
		t.Error("the compartment gauges do not show the halt")
	}
	for i, want := range []string{"complete", "erroring", "", "", "", ""} {
		var node corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: "halt-" + string(rune('0'+i))}, &node); err != nil {
			t.Fatal(err)
		}
		if status := node.Labels[skyhookv1.StatusKey("halt")]; status != want {
			t.Errorf("%s: status %q, want %q (only the first batch runs)", node.Name, status, want)
		}
	}
	waitWarning(t, "halt", "RolloutHalted", "")

	// The fix: the agent no longer fails anywhere.
	eventually(t, "the spec fix to apply", func() bool {
		var cur skyhookv1.Skyhook
		if err := c.Get(ctx, client.ObjectKey{Name: "halt"}, &cur); err != nil {
			return false
		}
		fixed := cur.Spec.Packages["tuning"]
		fixed.Env = nil
		cur.Spec.Packages["tuning"] = fixed
		return c.Update(ctx, &cur) == nil
	})
	got = waitSkyhook(t, "halt", time.Minute, isReady)
	if conditions.Has(got, skyhookv1.RolloutHaltedCondition) {
		t.Errorf("RolloutHalted stayed after the fix: %+v", got.Status.Conditions)
	}
	st := got.Status.Compartments
	if len(st) != 1 || st[0].Halted || st[0].Complete != 6 || st[0].BatchSize != 0 || st[0].Batch < 2 {
		t.Errorf("compartments %+v; want 6 complete, the batch size reset on completion, batch number kept", st)
	}
	if metricValue(t, "skyhook_compartment_halted", map[string]string{"skyhook": "halt", "compartment": "__default__"}) != 0 ||
		metricValue(t, "skyhook_compartment_nodes", map[string]string{"skyhook": "halt", "compartment": "__default__", "status": "complete"}) != 6 {
		t.Error("the compartment gauges do not show the finished rollout")
	}
}
