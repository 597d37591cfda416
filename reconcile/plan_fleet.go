package reconcile

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/fleetbudget"
)

// fleetPlan packs a rollout's waves under the NodeDisruptionBudgets as the
// passes would admit them (fleet_budget.go): a node whose work interrupts
// goes in the first wave every budget that selects it allows. The first
// wave counts the nodes other rollouts have out of service now; later ones
// assume those are done, since a plan cannot know when.
type fleetPlan struct {
	budgets []*fleetbudget.Budget
	base    []fleetbudget.Node
	rollout string
	now     time.Time
}

// newFleetPlan compiles the budgets; nil when there are none (admission
// refuses a budget that does not compile, and the operator ignores one).
func newFleetPlan(sk *skyhookv1.Skyhook, nodes []corev1.Node, budgets []skyhookv1.NodeDisruptionBudget, now time.Time) *fleetPlan {
	fp := &fleetPlan{rollout: skyhookv1.RefOf(sk).String(), now: now}
	for i := range budgets {
		if b, errs := fleetbudget.Compile(&budgets[i]); len(errs) == 0 {
			fp.budgets = append(fp.budgets, b)
		}
	}
	if len(fp.budgets) == 0 {
		return nil
	}
	fp.base = fleetbudget.NodesOf(nodes)
	return fp
}

// waves splits the nodes, in order, into waves of at most size. A node no
// budget lets into a wave of its own (a budget that allows none) is
// returned as held, with why.
func (fp *fleetPlan) waves(work []*corev1.Node, size int, interrupts func(*corev1.Node) bool) ([][]*corev1.Node, []skyhookv1.NodeAttention) {
	var waves [][]*corev1.Node
	left := work
	for first := true; len(left) > 0; first = false {
		fleet := fp.fleetFor(first)
		index := map[string]int{}
		for i, n := range fleet {
			index[n.Name] = i
		}
		var wave, rest []*corev1.Node
		var hold fleetbudget.Hold
		for _, n := range left {
			if len(wave) >= size {
				rest = append(rest, n)
				continue
			}
			candidate := fleetbudget.NodeOf(n)
			if h, ok := fleetbudget.Check(fp.budgets, fleet, candidate, interrupts(n), fp.now); !ok {
				hold = h
				rest = append(rest, n)
				continue
			}
			wave = append(wave, n)
			if i, found := index[n.Name]; found {
				fleet[i].TakenBy, fleet[i].Interrupting = fp.rollout, interrupts(n)
			}
		}
		if len(wave) == 0 {
			if !first {
				return waves, heldNodes(rest, hold)
			}
			continue // the others' nodes fill the budgets now: the next wave assumes them done
		}
		waves, left = append(waves, wave), rest
	}
	return waves, nil
}

// fleetFor is the fleet a wave starts from: as it is now for the first,
// with only this rollout's nodes out of service for the later ones.
func (fp *fleetPlan) fleetFor(first bool) []fleetbudget.Node {
	fleet := append([]fleetbudget.Node(nil), fp.base...)
	if !first {
		for i := range fleet {
			if fleet[i].TakenBy != fp.rollout {
				fleet[i].TakenBy, fleet[i].Interrupting = "", false
			}
		}
	}
	return fleet
}

func heldNodes(nodes []*corev1.Node, hold fleetbudget.Hold) []skyhookv1.NodeAttention {
	out := make([]skyhookv1.NodeAttention, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, skyhookv1.NodeAttention{Name: n.Name, Status: skyhookv1.StatusBlocked, Message: hold.Message()})
	}
	return out
}

// batch is the part of a DeploymentPolicy batch the budgets let start
// together; rest go back to the head of the compartment's queue, held are
// nodes no budget lets start at all. With no budgets (nil) the batch is
// whole.
func (fp *fleetPlan) batch(nodes []*corev1.Node, interrupts func(*corev1.Node) bool) (take, rest []*corev1.Node, held []skyhookv1.NodeAttention) {
	if fp == nil || len(nodes) == 0 {
		return nodes, nil, nil
	}
	waves, held := fp.waves(nodes, len(nodes), interrupts)
	if len(waves) == 0 {
		return nil, nil, held
	}
	for _, w := range waves[1:] {
		rest = append(rest, w...)
	}
	return waves[0], rest, held
}
