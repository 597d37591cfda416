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
)

// clockAt is the UTC time of day d from now, as HH:MM.
func clockAt(d time.Duration) string { return time.Now().UTC().Add(d).Format("15:04") }

// Outside the policy's interrupt window nodes run their stages up to the
// interrupt and wait there, uncordoned, with InterruptWindowClosed saying
// when the window opens; when the window opens the interrupts run.
func TestInterruptWindowHoldsInterruptsUntilItOpens(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	two := int32(2)
	policy := &skyhookv1.DeploymentPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "windowed"},
		Spec: skyhookv1.DeploymentPolicySpec{
			Default: skyhookv1.PolicyDefault{Budget: skyhookv1.DeploymentBudget{Count: &two},
				Strategy: &skyhookv1.DeploymentStrategy{Fixed: &skyhookv1.FixedStrategy{BatchSettings: skyhookv1.BatchSettings{InitialBatch: &two}}}},
			InterruptWindow: &skyhookv1.InterruptWindow{Start: clockAt(2 * time.Hour), End: clockAt(3 * time.Hour)},
		},
	}
	if err := c.Create(ctx, policy); err != nil {
		t.Fatal(err)
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
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), sk)
		eventually(t, "the policy to be deleted", func() bool { return c.Delete(context.Background(), policy) == nil })
	})
	got := waitSkyhook(t, "window", time.Minute, func(s *skyhookv1.Skyhook) bool {
		return strings.Contains(conditions.GetMessage(s, skyhookv1.InterruptWindowClosedCondition), "2 nodes wait")
	})
	if msg := conditions.GetMessage(got, skyhookv1.InterruptWindowClosedCondition); !strings.Contains(msg, "2 nodes wait") || !strings.Contains(msg, "opens next at") {
		t.Errorf("InterruptWindowClosed says %q; want both nodes and when the window opens", msg)
	}
	for _, name := range []string{"window-0", "window-1"} {
		n := getNode(t, name)
		if n.Spec.Unschedulable || hosts.Reboots()[name] != 0 {
			t.Errorf("%s was cordoned or rebooted outside the window", name)
		}
		if !strings.Contains(n.Annotations[skyhookv1.NodeStateAnnotation("window")], `"stage":"interrupt","state":"in_progress"`) {
			t.Errorf("%s has not run its stages up to the interrupt: %s", name, n.Annotations[skyhookv1.NodeStateAnnotation("window")])
		}
	}

	eventually(t, "the window to open", func() bool {
		if err := c.Get(ctx, client.ObjectKeyFromObject(policy), policy); err != nil {
			return false
		}
		policy.Spec.InterruptWindow.Start, policy.Spec.InterruptWindow.End = clockAt(-time.Hour), clockAt(time.Hour)
		return c.Update(ctx, policy) == nil
	})
	got = waitSkyhook(t, "window", time.Minute, isReady)
	if conditions.Has(got, skyhookv1.InterruptWindowClosedCondition) {
		t.Error("InterruptWindowClosed stayed after the window opened")
	}
	if r := hosts.Reboots(); r["window-0"] != 1 || r["window-1"] != 1 {
		t.Errorf("reboots %v, want each node once", r)
	}
}
