package reconcile

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/budget"
	"github.com/skyhook-go/skyhook/reconcile/compartment"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// Plan is what a rollout would do from the cluster as it is, if every
// stage succeeded: which nodes run which stages, in which batches of which
// compartments, and which nodes are blocked and why.
type Plan struct {
	Skyhook string `json:"skyhook"`
	// Batches in the order they would start; without a DeploymentPolicy
	// they are waves of the interruption budget.
	Batches []PlannedBatch `json:"batches"`
	// Blocked nodes would not be worked on.
	Blocked []skyhookv1.NodeAttention `json:"blocked,omitempty"`
	// Complete nodes have nothing to do.
	Complete []string `json:"complete,omitempty"`
}

// PlanInput is the cluster as a plan reads it: every node, the rollout's
// DeploymentPolicy (nil for none), the other rollouts, the taints that
// gate runtime-required rollouts, and the NodeDisruptionBudgets.
type PlanInput struct {
	Nodes         []corev1.Node
	Policy        *skyhookv1.DeploymentPolicy
	Others        []skyhookv1.Skyhook
	RuntimeTaints []corev1.Taint
	Budgets       []skyhookv1.NodeDisruptionBudget
}

// PlannedBatch is one batch (or wave) of nodes.
type PlannedBatch struct {
	Compartment string        `json:"compartment,omitempty"`
	Number      int           `json:"number"`
	Nodes       []PlannedNode `json:"nodes"`
}

// PlannedNode is a node and the stages it would run.
type PlannedNode struct {
	Name string `json:"name"`
	// Stages are "package version: stage, stage, ...".
	Stages []string `json:"stages"`
	// Interrupt is the merged interrupt the node would get, if any (its
	// type, and the services for a service interrupt).
	Interrupt string `json:"interrupt,omitempty"`
}

// PlanRollout computes a Plan with the reconciler's own decisions: the
// lifecycle of each package (nextStep), the blocked rules (ignore label,
// untolerated taints, NotReady), the priority of other Skyhooks, and the
// budget or the DeploymentPolicy's compartments and batch sizes, and the
// NodeDisruptionBudgets (plan_fleet.go).
func PlanRollout(sk *skyhookv1.Skyhook, in PlanInput) (*Plan, error) {
	nodes, policy, others, runtimeTaints := in.Nodes, in.Policy, in.Others, in.RuntimeTaints
	sel, err := metav1.LabelSelectorAsSelector(&sk.Spec.NodeSelector)
	if err != nil {
		return nil, fmt.Errorf("spec.nodeSelectors: %w", err)
	}
	views := make([]*skyhookv1.Skyhook, len(others))
	for i := range others {
		views[i] = &others[i]
	}
	ahead := selectorsOf(views, func(other *skyhookv1.Skyhook) bool { return goesBefore(other, sk) })
	p := &Plan{Skyhook: sk.Name, Batches: []PlannedBatch{}} // [] in JSON when nothing runs
	var work []*corev1.Node
	stagesOf := map[string]PlannedNode{}
	sorted := append([]corev1.Node{}, nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for i := range sorted {
		n := &sorted[i]
		if !sel.Matches(labels.Set(n.Labels)) {
			continue
		}
		if reason := blockedBecause(sk, n, ahead, runtimeTaints); reason != "" {
			p.Blocked = append(p.Blocked, skyhookv1.NodeAttention{Name: n.Name, Status: skyhookv1.StatusBlocked, Message: reason})
			continue
		}
		planned := simulate(sk, n)
		if len(planned.Stages) == 0 {
			p.Complete = append(p.Complete, n.Name)
			continue
		}
		stagesOf[n.Name] = planned
		work = append(work, n)
	}
	fp := newFleetPlan(sk, nodes, in.Budgets, time.Now())
	interrupts := func(n *corev1.Node) bool { return sk.Spec.RuntimeRequired || stagesOf[n.Name].Interrupt != "" }
	if policy == nil {
		size := max(1, budget.Cap(sk.Spec.InterruptionBudget, len(work)+len(p.Complete)))
		waves := budgetWaves(work, size)
		if fp != nil {
			var held []skyhookv1.NodeAttention
			waves, held = fp.waves(work, size, interrupts)
			p.Blocked = append(p.Blocked, held...)
		}
		for i, wave := range waves {
			b := PlannedBatch{Number: i + 1}
			for _, n := range wave {
				b.Nodes = append(b.Nodes, stagesOf[n.Name])
			}
			p.Batches = append(p.Batches, b)
		}
		return p, nil
	}
	byCompartment := map[string][]*corev1.Node{}
	counts := map[string]int{}
	for i := range sorted {
		n := &sorted[i]
		if sel.Matches(labels.Set(n.Labels)) {
			counts[compartment.Of(policy, n)]++
		}
	}
	for _, n := range work {
		name := compartment.Of(policy, n)
		byCompartment[name] = append(byCompartment[name], n)
	}
	for _, name := range slices.Sorted(maps.Keys(byCompartment)) {
		b, strategy := compartment.Settings(policy, name)
		st := compartment.Open(strategy, skyhookv1.CompartmentStatus{}, compartment.Outcome{}, 0)
		left := byCompartment[name]
		for number := 1; len(left) > 0; number++ {
			room := max(1, compartment.Room(b, counts[name], 0, st.BatchSize))
			take, rest, held := fp.batch(left[:min(room, len(left))], interrupts)
			p.Blocked = append(p.Blocked, held...)
			left = append(rest, left[min(room, len(left)):]...)
			if len(take) == 0 {
				break // the budgets allow none of the rest
			}
			batch := PlannedBatch{Compartment: name, Number: number}
			for _, n := range take {
				batch.Nodes = append(batch.Nodes, stagesOf[n.Name])
			}
			p.Batches = append(p.Batches, batch)
			st = compartment.Open(strategy, st, compartment.Outcome{Members: len(batch.Nodes), Succeeded: len(batch.Nodes)}, 0)
		}
	}
	return p, nil
}

// budgetWaves cuts the nodes, in order, into waves of the budget's size.
func budgetWaves(work []*corev1.Node, size int) [][]*corev1.Node {
	var waves [][]*corev1.Node
	for i := 0; i < len(work); i += size {
		waves = append(waves, work[i:min(i+size, len(work))])
	}
	return waves
}

// blockedBecause says why the reconciler would not work on the node now.
func blockedBecause(sk *skyhookv1.Skyhook, n *corev1.Node, ahead []skyhookAhead, runtimeTaints []corev1.Taint) string {
	if ignore := skyhookv1.KindOf(sk).IgnoreNodeLabel(); n.Labels[ignore] == "true" {
		return "ignored: labelled " + ignore + "=true"
	}
	if taints := stagepod.Untolerated(sk, n, runtimeTaints); len(taints) > 0 {
		return "taints not tolerated: " + taintList(taints)
	}
	if down, _ := notReadySince(n); down {
		return "NotReady"
	}
	if other := waitingFor(ahead, n); other != "" {
		return "waits for Skyhook " + other + " (a lower priority number) to complete here"
	}
	return ""
}

// simulate runs the package lifecycle on a copy of the node's record,
// every stage succeeding, and lists the stages.
func simulate(sk *skyhookv1.Skyhook, n *corev1.Node) PlannedNode {
	state, _ := nodestate.Read(n, skyhookv1.RefOf(sk))
	state = maps.Clone(state)
	if state == nil {
		state = skyhookv1.NodeState{}
	}
	config := maps.Clone(nodestate.ReadConfig(n, skyhookv1.RefOf(sk)))
	if config == nil {
		config = map[string]string{}
	}
	planned := PlannedNode{Name: n.Name}
	var interrupts []skyhookv1.Interrupt
	for _, name := range dependencyOrder(sk, state) {
		var stages []string
		version := ""
		for range 12 {
			step := nextStep(sk, name, state, config)
			key := skyhookv1.NodeStateKey(name, step.Version)
			if step.Action == lifecycle.Done {
				break
			}
			if step.Action == lifecycle.Forget {
				delete(state, key)
				continue
			}
			version = step.Version
			stages = append(stages, string(step.Stage))
			if step.Stage == skyhookv1.StageInterrupt {
				if in := interruptOf(sk, name, config); in != nil {
					interrupts = append(interrupts, *in)
				}
			}
			if step.Stage == skyhookv1.StageConfig {
				config[name] = stagepod.ConfigHash(sk.Spec.Packages[name].ConfigMap)
			}
			if step.Stage == skyhookv1.StageUpgrade {
				for k, e := range state {
					if e.Name == name && k != key {
						delete(state, k)
					}
				}
			}
			state[key] = skyhookv1.PackageStatus{Name: name, Version: step.Version, Stage: step.Stage, State: skyhookv1.StateComplete}
		}
		if len(stages) > 0 {
			planned.Stages = append(planned.Stages, fmt.Sprintf("%s %s: %s", name, version, strings.Join(stages, ", ")))
		}
	}
	if merged := interrupt.Merge(interrupts); merged != nil {
		planned.Interrupt = string(merged.Type)
		if len(merged.Services) > 0 {
			planned.Interrupt += " " + strings.Join(merged.Services, ",")
		}
	}
	return planned
}
