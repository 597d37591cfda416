package fleetbudget

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// A start granted and not yet in the cache counts: two rollouts' passes
// cannot both take the last slot. A grant the cache never shows is
// forgotten.
func TestLedgerCountsGrantsTheCacheDoesNotShowYet(t *testing.T) {
	b := budget(t, "one", skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromInt32(1)})
	fleet := []Node{node("a", "z1", "", false), node("b", "z1", "", false)}
	var l Ledger
	if _, ok := l.Ask(now, Question{Budgets: []*Budget{b}, Fleet: fleet, Rollout: Rollout{Name: "Skyhook/x", Priority: 200}, Candidate: fleet[0], Interrupting: true}); !ok {
		t.Fatal("a: the first slot")
	}
	h, ok := l.Ask(now, Question{Budgets: []*Budget{b}, Fleet: fleet, Rollout: Rollout{Name: "NodeWright/y", Priority: 200}, Candidate: fleet[1], Interrupting: true})
	if ok || h.Taken != 1 || h.By["Skyhook/x"] != 1 {
		t.Errorf("b while a's start is not in the cache: %+v %v; want held by x's grant", h, ok)
	}
	if _, ok := l.Ask(now.Add(GrantMemory+time.Second), Question{Budgets: []*Budget{b}, Fleet: fleet, Rollout: Rollout{Name: "NodeWright/y", Priority: 200}, Candidate: fleet[1], Interrupting: true}); !ok {
		t.Error("a grant the cache never showed is forgotten after GrantMemory")
	}
	// One its rollout says it is done with frees at once.
	l.Release("NodeWright/y", []string{"b"})
	if _, ok := l.Ask(now.Add(GrantMemory+2*time.Second), Question{Budgets: []*Budget{b}, Fleet: fleet, Rollout: Rollout{Name: "Skyhook/x", Priority: 200}, Candidate: fleet[0], Interrupting: true}); !ok {
		t.Error("a grant its rollout released still counts")
	}
}

// Rollouts held by a budget wait in line, the lower priority number first,
// then the longer wait; one behind does not take the slot that frees.
func TestLedgerServesTheLineInOrder(t *testing.T) {
	b := budget(t, "one", skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromInt32(1)})
	fleet := []Node{node("a", "z1", "Skyhook/first", true), node("b", "z1", "", false), node("c", "z1", "", false), node("d", "z1", "", false)}
	budgets := []*Budget{b}
	var l Ledger
	late, urgent, early := Rollout{Name: "Skyhook/late", Priority: 200}, Rollout{Name: "NodeWright/urgent", Priority: 100}, Rollout{Name: "Skyhook/early", Priority: 200}
	for i, r := range []Rollout{early, late, urgent} {
		if _, ok := l.Ask(now.Add(time.Duration(i)*time.Second), Question{Budgets: budgets, Fleet: fleet, Rollout: r, Candidate: fleet[1+i], Interrupting: true}); ok {
			t.Fatalf("%s took a slot held by a", r.Name)
		}
	}
	if got := strings.Join(l.Waiting(), "; "); !strings.HasPrefix(got, "NodeWright/urgent (priority 100") || strings.Index(got, "Skyhook/early") > strings.Index(got, "Skyhook/late") {
		t.Errorf("the line: %s; want urgent, then early, then late", got)
	}
	fleet[0].TakenBy = "" // a is done: one slot frees
	later := now.Add(10 * time.Second)
	h, ok := l.Ask(later, Question{Budgets: budgets, Fleet: fleet, Rollout: late, Candidate: fleet[2], Interrupting: true})
	if ok || h.Ahead != "NodeWright/urgent" || !strings.Contains(h.Message(), "waits behind NodeWright/urgent for NodeDisruptionBudget one") {
		t.Errorf("late asks first: %+v %v (%s); want it behind urgent", h, ok, h.Message())
	}
	if _, ok := l.Ask(later, Question{Budgets: budgets, Fleet: fleet, Rollout: early, Candidate: fleet[1], Interrupting: true}); ok {
		t.Error("early took the slot before urgent, whose priority number is lower")
	}
	if _, ok := l.Ask(later, Question{Budgets: budgets, Fleet: fleet, Rollout: urgent, Candidate: fleet[3], Interrupting: true}); !ok {
		t.Fatal("urgent, first in line, did not get the slot")
	}
	// A minute later urgent is done with d (its grant is forgotten, the
	// cache shows d in service): the slot frees again.
	if _, ok := l.Ask(later.Add(time.Minute), Question{Budgets: budgets, Fleet: fleet, Rollout: late, Candidate: fleet[2], Interrupting: true}); ok {
		t.Error("late took the next slot before early, which has waited longer")
	}
	if _, ok := l.Ask(later.Add(time.Minute), Question{Budgets: budgets, Fleet: fleet, Rollout: early, Candidate: fleet[1], Interrupting: true}); !ok {
		t.Error("early, next in line, did not get the slot")
	}
}

// A start granted for interrupting work holds its slot while the cache
// shows the node running a stage that disturbs nothing yet (its interrupt
// comes later), and frees it when the rollout is done with the node.
func TestLedgerHoldsAGrantWhileItsRolloutRunsOnTheNode(t *testing.T) {
	b := budget(t, "one", skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromInt32(1)})
	fleet := []Node{node("a", "z1", "", false), node("b", "z1", "", false)}
	budgets := []*Budget{b}
	x, y := Rollout{Name: "Skyhook/x", Priority: 200}, Rollout{Name: "Skyhook/y", Priority: 200}
	var l Ledger
	if _, ok := l.Ask(now, Question{Budgets: budgets, Fleet: fleet, Rollout: x, Candidate: fleet[0], Interrupting: true}); !ok {
		t.Fatal("a: the first slot")
	}
	fleet[0].TakenBy = "Skyhook/x" // its config stage runs; no cordon yet
	later := now.Add(GrantMemory + time.Minute)
	if h, ok := l.Ask(later, Question{Budgets: budgets, Fleet: fleet, Rollout: y, Candidate: fleet[1], Interrupting: true}); ok || h.By["Skyhook/x"] != 1 {
		t.Errorf("b while x runs on a before its interrupt: %+v %v; want held by x", h, ok)
	}
	fleet[0].TakenBy = "" // x is done with a
	if _, ok := l.Ask(later.Add(time.Second), Question{Budgets: budgets, Fleet: fleet, Rollout: y, Candidate: fleet[1], Interrupting: true}); !ok {
		t.Error("b once x is done with a: still held")
	}
}

// A rollout held by one domain's cap waits in line for that domain only: a
// rollout whose node is in another domain with room takes it.
func TestLedgerLineIsPerDomain(t *testing.T) {
	one := intstr.FromInt32(1)
	b := budget(t, "zones", skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromInt32(3),
		Topology: &skyhookv1.DisruptionTopology{Key: "zone", MaxUnavailablePerDomain: &one}})
	fleet := []Node{node("a1", "z1", "Skyhook/x", true), node("a2", "z1", "", false), node("b1", "z2", "", false)}
	budgets := []*Budget{b}
	var l Ledger
	h, ok := l.Ask(now, Question{Budgets: budgets, Fleet: fleet, Rollout: Rollout{Name: "Skyhook/first", Priority: 100}, Candidate: fleet[1], Interrupting: true})
	if ok || h.Domain != "z1" {
		t.Fatalf("a2 while a1 is out: %+v %v; want held by zone z1", h, ok)
	}
	if h, ok := l.Ask(now, Question{Budgets: budgets, Fleet: fleet, Rollout: Rollout{Name: "Skyhook/second", Priority: 200}, Candidate: fleet[2], Interrupting: true}); !ok {
		t.Errorf("b1 in zone z2, which has room: %+v; want it to start though first waits for z1", h)
	}
}
