package reconcile

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// The plan's waves follow the NodeDisruptionBudgets as the passes admit
// nodes: a budget of 2, one per zone, makes waves of one node per zone
// though the rollout's own budget is 4; a node another rollout has cordoned
// now takes a slot and its zone's in the first wave; a budget that allows no node
// leaves the rest blocked, saying which budget.
func TestPlanCountsTheFleetBudget(t *testing.T) {
	nodes := []corev1.Node{zoned("a1", "z1"), zoned("a2", "z1"), zoned("b1", "z2"), zoned("b2", "z2")}
	four := 4
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "driver"}, Spec: skyhookv1.SkyhookSpec{
		NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": "gpu"}},
		InterruptionBudget: skyhookv1.InterruptionBudget{Count: &four},
		Packages: skyhookv1.Packages{"driver": {PackageRef: skyhookv1.PackageRef{Version: "1.0.0"}, Image: "ghcr.io/x/driver",
			Interrupt: &skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}}},
	}}
	one := intstr.FromInt32(1)
	budgets := []skyhookv1.NodeDisruptionBudget{{ObjectMeta: metav1.ObjectMeta{Name: "zones"}, Spec: skyhookv1.NodeDisruptionBudgetSpec{
		MaxUnavailable: intstr.FromInt32(2), Topology: &skyhookv1.DisruptionTopology{Key: "zone", MaxUnavailablePerDomain: &one}}}}

	plan, err := PlanRollout(sk, PlanInput{Nodes: nodes, Budgets: budgets})
	if err != nil {
		t.Fatal(err)
	}
	if got := waveNames(plan); got != "a1 b1 | a2 b2" {
		t.Errorf("waves %q; want one node per zone in each: a1 b1 | a2 b2", got)
	}

	batchOf4 := int32(4)
	policy := &skyhookv1.DeploymentPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: skyhookv1.DeploymentPolicySpec{Default: skyhookv1.PolicyDefault{Budget: skyhookv1.DeploymentBudget{Count: &batchOf4},
			Strategy: &skyhookv1.DeploymentStrategy{Fixed: &skyhookv1.FixedStrategy{BatchSettings: skyhookv1.BatchSettings{InitialBatch: &batchOf4}}}}}}
	plan, err = PlanRollout(sk, PlanInput{Nodes: nodes, Policy: policy, Budgets: budgets})
	if err != nil {
		t.Fatal(err)
	}
	if got := waveNames(plan); got != "a1 b1 | a2 b2" {
		t.Errorf("with a DeploymentPolicy batch of 4: batches %q; want the budget's one per zone: a1 b1 | a2 b2", got)
	}

	other := zoned("c1", "z2") // not the rollout's, cordoned by another
	delete(other.Labels, "pool")
	other.Annotations = map[string]string{"skyhook.nvidia.com/cordon_kernel": "true"}
	plan, err = PlanRollout(sk, PlanInput{Nodes: append(nodes, other), Budgets: budgets})
	if err != nil {
		t.Fatal(err)
	}
	if got := waveNames(plan); got != "a1 | a2 b1 | b2" {
		t.Errorf("with c1 of zone z2 cordoned by Skyhook kernel: waves %q; want a1 | a2 b1 | b2", got)
	}

	none := intstr.FromInt32(0)
	budgets[0].Spec.MaxUnavailable = none
	budgets[0].Spec.Topology = nil
	plan, err = PlanRollout(sk, PlanInput{Nodes: nodes, Budgets: budgets})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Batches) != 0 || len(plan.Blocked) != 4 || !strings.Contains(plan.Blocked[0].Message, "NodeDisruptionBudget zones") {
		t.Errorf("a budget of 0: batches %v, blocked %v; want every node blocked by NodeDisruptionBudget zones", plan.Batches, plan.Blocked)
	}
}

func zoned(name, zone string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": zone, "pool": "gpu"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

func waveNames(p *Plan) string {
	var waves []string
	for _, b := range p.Batches {
		var names []string
		for _, n := range b.Nodes {
			names = append(names, n.Name)
		}
		waves = append(waves, strings.Join(names, " "))
	}
	return strings.Join(waves, " | ")
}
