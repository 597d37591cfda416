package fleetbudget

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func budget(t testing.TB, name string, spec skyhookv1.NodeDisruptionBudgetSpec) *Budget {
	t.Helper()
	b, errs := Compile(&skyhookv1.NodeDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	if len(errs) > 0 {
		t.Fatalf("%s: %v", name, errs)
	}
	return b
}

func node(name, zone, takenBy string, interrupting bool) Node {
	return Node{Name: name, Labels: map[string]string{"zone": zone, "pool": "gpu"}, TakenBy: takenBy, Interrupting: interrupting}
}

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// A bad budget is refused field by field.
func TestCompileNamesEveryBadField(t *testing.T) {
	_, errs := Compile(&skyhookv1.NodeDisruptionBudget{Spec: skyhookv1.NodeDisruptionBudgetSpec{
		MaxUnavailable: intstr.FromString("120%"),
		Topology:       &skyhookv1.DisruptionTopology{Key: "not a key!"},
		Windows:        []skyhookv1.DisruptionWindow{{Schedule: "every tuesday", Duration: metav1.Duration{}}},
	}})
	got := errs.ToAggregate().Error()
	for _, want := range []string{"spec.maxUnavailable", "spec.topology.key", "spec.topology: Required", "spec.windows[0].schedule", "spec.windows[0].duration"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q lack %s", got, want)
		}
	}
}

// The cap counts the nodes out of service across rollouts; a percent
// rounds up; a node already out keeps its slot.
func TestCheckCapsNodesOutAcrossRollouts(t *testing.T) {
	b := budget(t, "fleet", skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromString("20%")})
	fleet := []Node{node("a", "z1", "Skyhook/driver", true), node("b", "z1", "NodeWright/kernel", false), node("c", "z2", "", false),
		node("d", "z2", "", false), node("e", "z2", "", false), node("f", "z2", "", false)}
	// 20% of 6 rounds up to 2; a is out (interrupting), b only runs a stage.
	if _, ok := Check([]*Budget{b}, fleet, fleet[2], true, now); !ok {
		t.Error("c held with 1 of 2 taken")
	}
	fleet[1].Interrupting = true
	h, ok := Check([]*Budget{b}, fleet, fleet[2], true, now)
	if ok || h.Taken != 2 || h.Allowed != 2 || h.By["Skyhook/driver"] != 1 || h.By["NodeWright/kernel"] != 1 {
		t.Errorf("c: %+v %v; want held, 2 of 2, by both rollouts", h, ok)
	}
	if !strings.Contains(h.Message(), "held by NodeDisruptionBudget fleet: 2 of 2 taken (NodeWright/kernel 1, Skyhook/driver 1)") {
		t.Errorf("message %q", h.Message())
	}
	if _, ok := Check([]*Budget{b}, fleet, fleet[0], true, now); !ok {
		t.Error("a, already out, must keep its slot")
	}
	if _, ok := Check([]*Budget{b}, fleet, fleet[2], false, now); !ok {
		t.Error("a stage that interrupts nothing is not counted by default")
	}
	every := budget(t, "every", skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromInt32(2), CountNonInterruptingStages: true})
	fleet[1].Interrupting = false
	if _, ok := Check([]*Budget{every}, fleet, fleet[2], false, now); ok {
		t.Error("with countNonInterruptingStages, b's stage counts and c's too: 2 of 2")
	}
}

// Per domain, and how many domains; nodes out of the selector do not count.
func TestCheckCapsDomains(t *testing.T) {
	b := budget(t, "racks", skyhookv1.NodeDisruptionBudgetSpec{
		NodeSelector:   metav1.LabelSelector{MatchLabels: map[string]string{"pool": "gpu"}},
		MaxUnavailable: intstr.FromInt32(10),
		Topology:       &skyhookv1.DisruptionTopology{Key: "zone", MaxUnavailablePerDomain: ptr.To(intstr.FromInt32(1)), MaxDisruptedDomains: ptr.To[int32](2)},
	})
	cpu := Node{Name: "cpu", Labels: map[string]string{"zone": "z9"}, TakenBy: "Skyhook/x", Interrupting: true}
	fleet := []Node{node("a", "z1", "Skyhook/driver", true), node("b", "z1", "", false), node("c", "z2", "", false),
		node("d", "z3", "", false), cpu}
	h, ok := Check([]*Budget{b}, fleet, fleet[1], true, now)
	if ok || h.Domain != "z1" || h.Taken != 1 || h.Allowed != 1 {
		t.Errorf("b in z1 beside a: %+v %v; want held by the domain cap", h, ok)
	}
	if _, ok := Check([]*Budget{b}, fleet, fleet[2], true, now); !ok {
		t.Error("c in z2: a second domain is allowed")
	}
	fleet[2].TakenBy, fleet[2].Interrupting = "NodeWright/kernel", true
	h, ok = Check([]*Budget{b}, fleet, fleet[3], true, now)
	if ok || !h.Domains || h.Taken != 2 || h.Allowed != 2 {
		t.Errorf("d in z3 with z1 and z2 disrupted: %+v %v; want held by the domains' cap", h, ok)
	}
	if !strings.Contains(h.Message(), "(disrupted domains): 2 of 2") {
		t.Errorf("message %q", h.Message())
	}
}

// Several budgets: every active one that selects the node must allow it;
// one outside its windows caps nothing.
func TestCheckTheMostRestrictiveActiveBudgetWins(t *testing.T) {
	loose := budget(t, "loose", skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromInt32(5)})
	nightly := budget(t, "nightly", skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromInt32(0),
		Windows: []skyhookv1.DisruptionWindow{{Schedule: "0 22 * * *", Duration: metav1.Duration{Duration: 4 * time.Hour}}}})
	fleet := []Node{node("a", "z1", "", false), node("b", "z1", "", false)}
	if _, ok := Check([]*Budget{loose, nightly}, fleet, fleet[0], true, now); !ok {
		t.Error("at noon the nightly budget is not active")
	}
	late := time.Date(2026, 12, 8, 1, 30, 0, 0, time.UTC)
	h, ok := Check([]*Budget{loose, nightly}, fleet, fleet[0], true, late)
	if ok || h.Budget != "nightly" {
		t.Errorf("at 01:30 inside the 22:00+4h window: %+v %v; want held by nightly", h, ok)
	}
	if nightly.Active(time.Date(2026, 12, 8, 2, 0, 0, 0, time.UTC)) {
		t.Error("the window ends at 02:00")
	}
	if !nightly.Active(time.Date(2026, 12, 7, 22, 0, 0, 0, time.UTC)) {
		t.Error("the window starts at 22:00")
	}
}

// Count tallies a budget for its status: selected, allowed and disrupted
// overall and per domain, by rollout; outside its window a budget allows
// every node, and NextChange says when the window opens.
func TestCountTalliesByRolloutAndDomain(t *testing.T) {
	one := intstr.FromInt32(1)
	b := budget(t, "racks", skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromString("50%"),
		Topology: &skyhookv1.DisruptionTopology{Key: "rack", MaxUnavailablePerDomain: &one}})
	fleet := []Node{node("a", "z1", "Skyhook/x", true), node("b", "z1", "", false), node("c", "z2", "NodeWright/y", true), node("d", "z2", "NodeWright/y", false)}
	for i := range fleet {
		fleet[i].Labels = map[string]string{"rack": fleet[i].Labels["zone"]}
	}
	got := b.Count(fleet, now)
	if !got.Active || got.Selected != 4 || got.Allowed != 2 || got.Disrupted != 2 {
		t.Errorf("tally %+v; want active, 4 selected, 2 allowed, 2 disrupted (d runs a stage that disturbs nothing)", got)
	}
	if len(got.ByRollout["Skyhook/x"]) != 1 || len(got.ByRollout["NodeWright/y"]) != 1 {
		t.Errorf("by rollout %v", got.ByRollout)
	}
	if d := got.Domains["z2"]; d.Selected != 2 || d.Disrupted != 1 || d.Allowed != 1 {
		t.Errorf("domain z2 %+v; want 2 selected, 1 disrupted, 1 allowed", d)
	}

	nightly := budget(t, "nightly", skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromInt32(1),
		Windows: []skyhookv1.DisruptionWindow{{Schedule: "0 22 * * *", Duration: metav1.Duration{Duration: 2 * time.Hour}}}})
	noon := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	if got := nightly.Count(fleet, noon); got.Active || got.Allowed != 4 {
		t.Errorf("at noon %+v; want inactive, every node allowed", got)
	}
	if next := nightly.NextChange(noon); !next.Equal(time.Date(2026, 12, 7, 22, 0, 0, 0, time.UTC)) {
		t.Errorf("next change at noon: %s; want 22:00", next)
	}
	if next := nightly.NextChange(noon.Add(11 * time.Hour)); !next.Equal(time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("next change at 23:00: %s; want midnight, the window's end", next)
	}
}
