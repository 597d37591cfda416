package v1alpha1_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// kubectl prints a NodeDisruptionBudget's counts as columns, by its plural
// and its short name.
func TestNodeDisruptionBudgetPrinterColumnsInKubectl(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	b := &skyhookv1.NodeDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "printed"},
		Spec: skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromString("10%")}}
	if err := c.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), b) })
	b.Status = skyhookv1.NodeDisruptionBudgetStatus{Selected: 40, Allowed: 4, Disrupted: 3,
		Conditions: []metav1.Condition{{Type: "Active", Status: metav1.ConditionTrue, Reason: "Applies", LastTransitionTime: metav1.Now()}}}
	if err := c.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"nodedisruptionbudgets", "ndb"} {
		wantRow(t, kubectl(t, "get", kind, "printed"), []string{"NAME", "MAX", "SELECTED", "ALLOWED", "DISRUPTED", "ACTIVE", "AGE"},
			[]string{"printed", "10%", "40", "4", "3", "True"})
	}
}
