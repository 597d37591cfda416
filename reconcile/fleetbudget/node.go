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
// rollout's cordon annotation (<prefix>/cordon_<name>) is on it, else
// taken by a stage while a rollout's status label (<prefix>/status_<name>)
// says in_progress or erroring. A cordon whose node yielded to workloads
// (drain.onTimeout Yield) does not count: the node waits, disturbing
// nothing. Of several rollouts, the first by kind and name is named.
func NodeOf(n *corev1.Node) Node {
	out := Node{Name: n.Name, Labels: n.Labels}
	var cordoned, running []string
	for _, kind := range skyhookv1.RolloutKinds {
		cordon := kind.Prefix + "/cordon_"
		for key := range n.Annotations {
			name, ok := strings.CutPrefix(key, cordon)
			if !ok || name == "" {
				continue
			}
			if rec := interrupt.Read(n, kind.Named(name)); rec != nil && rec.Phase == interrupt.PhaseYielded {
				continue // cordoned, but its slot given back to workloads: nothing is disturbed
			}
			cordoned = append(cordoned, kind.Named(name).String())
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
	case len(cordoned) > 0:
		sort.Strings(cordoned)
		out.TakenBy, out.Interrupting = cordoned[0], true
	case len(running) > 0:
		sort.Strings(running)
		out.TakenBy = running[0]
	}
	return out
}
