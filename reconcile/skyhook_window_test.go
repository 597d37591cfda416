package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// clockAt is the UTC time of day d from now, as HH:MM.
func clockAt(d time.Duration) string { return time.Now().UTC().Add(d).Format("15:04") }

// The policy's interrupt window closes mid-rollout: the node already
// interrupted finishes; the next one, whose package will interrupt, is not
// drained before its apply outside the window, so it waits there,
// uncordoned and untouched, with InterruptWindowClosed saying when the
// window opens; when it opens again the rollout resumes where it stopped.
func TestInterruptWindowClosingMidRolloutAndReopening(t *testing.T) {
	createNodes(t, simnode.Numbered("window", 2, map[string]string{"pool": "window"})...)
	c := k8sClient(t)
	ctx := context.Background()
	one := int32(1)
	policy := &skyhookv1.DeploymentPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "windowed"},
		Spec: skyhookv1.DeploymentPolicySpec{
			Default:         skyhookv1.PolicyDefault{Budget: skyhookv1.DeploymentBudget{Count: &one}},
			InterruptWindow: &skyhookv1.InterruptWindow{Start: clockAt(-time.Hour), End: clockAt(time.Hour)},
		},
	}
	createPolicy(t, policy)
	setWindow := func(start, end time.Duration) {
		t.Helper()
		eventually(t, "the window to change", func() bool {
			if err := c.Get(ctx, client.ObjectKeyFromObject(policy), policy); err != nil {
				return false
			}
			policy.Spec.InterruptWindow.Start, policy.Spec.InterruptWindow.End = clockAt(start), clockAt(end)
			return c.Update(ctx, policy) == nil
		})
	}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "window"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:     metav1.LabelSelector{MatchLabels: map[string]string{"pool": "window"}},
			DeploymentPolicy: "windowed",
			Packages:         skyhookv1.Packages{"driver": withInterrupt(pkg("1.0.0", "ghcr.io/x/driver", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot})},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	eventually(t, "window-0 to reboot inside the window", func() bool { return hosts.Reboots()["window-0"] == 1 })
	setWindow(2*time.Hour, 3*time.Hour) // closes

	got := waitSkyhook(t, "window", time.Minute, func(s *skyhookv1.Skyhook) bool {
		return strings.Contains(conditions.GetMessage(s, skyhookv1.InterruptWindowClosedCondition), "1 nodes wait")
	})
	if msg := conditions.GetMessage(got, skyhookv1.InterruptWindowClosedCondition); !strings.Contains(msg, "opens next at") {
		t.Errorf("InterruptWindowClosed says %q; want when the window opens", msg)
	}
	if getNode(t, "window-0").Labels[skyhookv1.StatusKey("window")] != "complete" {
		t.Error("the node interrupted before the window closed did not finish")
	}
	n := getNode(t, "window-1")
	if n.Spec.Unschedulable || hosts.Reboots()["window-1"] != 0 {
		t.Error("window-1 was cordoned or rebooted outside the window")
	}
	if strings.Contains(n.Annotations[skyhookv1.NodeStateAnnotation("window")], "driver") {
		t.Errorf("window-1 ran stages before being drained: %s", n.Annotations[skyhookv1.NodeStateAnnotation("window")])
	}

	setWindow(-time.Hour, time.Hour) // opens again
	got = waitSkyhook(t, "window", time.Minute, isReady)
	if conditions.Has(got, skyhookv1.InterruptWindowClosedCondition) {
		t.Error("InterruptWindowClosed stayed after the window opened")
	}
	if r := hosts.Reboots(); r["window-0"] != 1 || r["window-1"] != 1 {
		t.Errorf("reboots %v, want each node once", r)
	}
}
