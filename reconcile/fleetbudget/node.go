package fleetbudget

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
)

// NodeOf reads how a node stands for the budgets from what the rollouts
// of every kind write on it: out of service (Interrupting) while a
// rollout's cordon annotation (<prefix>/cordon_<name>) is on it, or its
// interrupt record (<prefix>/interrupt_<name>) says a drain or an
// interrupt is under way, which is written with the node's start, before
// the cordon: so a leader that took over between the two counts the node
// already. Else it is taken by a stage while a rollout's status label
// (<prefix>/status_<name>) says in_progress or erroring. A node that
// yielded to workloads (drain.onTimeout Yield) or was skipped does not
// count, cordoned or not: it waits, disturbing nothing. Of several
// rollouts, the first by kind and name is named.
func NodeOf(n *corev1.Node) Node {
	out := Node{Name: n.Name, Labels: n.Labels}
	var interrupting, running []string
	for _, kind := range skyhookv1.RolloutKinds {
		for _, name := range namesWith(n.Annotations, kind.Named("").CordonAnnotation(), kind.Named("").InterruptAnnotation()) {
			if disturbs(n, kind.Named(name)) {
				interrupting = append(interrupting, kind.Named(name).String())
			}
		}
		status := kind.Prefix + "/status_"
		for key, value := range n.Labels {
			name, ok := strings.CutPrefix(key, status)
			if ok && name != "" && (value == string(skyhookv1.StatusInProgress) || value == string(skyhookv1.StatusErroring)) {
				running = append(running, kind.Named(name).String())
			}
		}
	}
	switch {
	case len(interrupting) > 0:
		sort.Strings(interrupting)
		out.TakenBy, out.Interrupting = interrupting[0], true
	case len(running) > 0:
		sort.Strings(running)
		out.TakenBy = running[0]
	}
	return out
}

// NodesOf reads every node as NodeOf does: the fleet the budgets count.
func NodesOf(nodes []corev1.Node) []Node {
	out := make([]Node, len(nodes))
	for i := range nodes {
		out[i] = NodeOf(&nodes[i])
	}
	return out
}

// namesWith are the rollout names of the annotations with any of the
// prefixes, each once.
func namesWith(annotations map[string]string, prefixes ...string) []string {
	seen := map[string]bool{}
	var names []string
	for key := range annotations {
		for _, prefix := range prefixes {
			if name, ok := strings.CutPrefix(key, prefix); ok && name != "" && !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	return names
}

// disturbs reports whether the rollout has the node out of service: its
// interrupt record says a drain or an interrupt is under way, or, with no
// record it can read, its cordon is on the node.
func disturbs(n *corev1.Node, rollout skyhookv1.RolloutRef) bool {
	rec := interrupt.Read(n, rollout)
	if rec == nil {
		_, cordoned := n.Annotations[rollout.CordonAnnotation()]
		return cordoned
	}
	return rec.Phase != interrupt.PhaseYielded && rec.Phase != interrupt.PhaseSkipped
}
