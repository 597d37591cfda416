package webhook_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// A NodeDisruptionBudget the rollouts could not decide with is refused
// through the apiserver, each bad field named with its rule; a good one is
// admitted.
func TestNodeDisruptionBudgetIsRefusedByField(t *testing.T) {
	c := k8sClient(t)
	bad := &skyhookv1.NodeDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Spec: skyhookv1.NodeDisruptionBudgetSpec{
			MaxUnavailable: intstr.FromString("150%"),
			Topology:       &skyhookv1.DisruptionTopology{Key: "rack label!"},
			Windows:        []skyhookv1.DisruptionWindow{{Schedule: "at noon", Duration: metav1.Duration{Duration: 1}}},
		},
	}
	err := c.Create(context.Background(), bad, client.DryRunAll)
	if err == nil {
		t.Fatal("a budget with a bad percent, topology key and schedule was admitted")
	}
	for _, want := range []string{"spec.maxUnavailable", "from 0% to 100%", "spec.topology.key", "must be a label key", "spec.topology: Required", "spec.windows[0].schedule"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %s", err, want)
		}
	}
	good := bad.DeepCopy()
	one := intstr.FromInt32(1)
	good.Spec.MaxUnavailable = intstr.FromString("10%")
	good.Spec.Topology = &skyhookv1.DisruptionTopology{Key: "topology.kubernetes.io/zone", MaxUnavailablePerDomain: &one}
	good.Spec.Windows[0].Schedule = "0 22 * * 1-5"
	if err := c.Create(context.Background(), good, client.DryRunAll); err != nil {
		t.Errorf("a valid budget was refused: %v", err)
	}
}
