package fleetbudget

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// What one pass pays for the fleet budgets at N nodes, when budgets exist:
// reading every node as the budgets count it (NodeOf, once per pass) and
// one ledger answer (Ask, once per node started). go test -bench . ./reconcile/fleetbudget/
func BenchmarkFleetBudgetPass(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		nodes := make([]corev1.Node, n)
		for i := range nodes {
			nodes[i] = corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i),
				Labels:      map[string]string{"pool": "gpu", "rack": fmt.Sprintf("r%d", i%50), "skyhook.nvidia.com/status_driver": "complete"},
				Annotations: map[string]string{"skyhook.nvidia.com/nodeState_driver": `{"driver|1.0.0":{"state":"complete"}}`}}}
			if i%20 == 0 { // 5% out of service, as a rollout in flight leaves them
				nodes[i].Annotations["skyhook.nvidia.com/cordon_driver"] = "true"
				nodes[i].Annotations["skyhook.nvidia.com/interrupt_driver"] = `{"generation":1,"phase":"interrupt","since":"2026-12-07T12:00:00Z","packages":["driver|1.0.0"],"interrupt":{"type":"reboot"}}`
			}
		}
		one := intstr.FromInt32(1)
		budgets := []*Budget{
			budget(b, "fleet", skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromString("10%")}),
			budget(b, "racks", skyhookv1.NodeDisruptionBudgetSpec{MaxUnavailable: intstr.FromString("20%"),
				Topology: &skyhookv1.DisruptionTopology{Key: "rack", MaxUnavailablePerDomain: &one}}),
		}
		b.Run(fmt.Sprintf("NodeOf/nodes=%d", n), func(b *testing.B) {
			for b.Loop() {
				for i := range nodes {
					_ = NodeOf(&nodes[i])
				}
			}
		})
		fleet := make([]Node, n)
		for i := range nodes {
			fleet[i] = NodeOf(&nodes[i])
		}
		b.Run(fmt.Sprintf("Ask/nodes=%d", n), func(b *testing.B) {
			var l Ledger
			for b.Loop() {
				_, _ = l.Ask(now, Question{Budgets: budgets, Fleet: fleet, Rollout: Rollout{Name: "Skyhook/kernel"}, Candidate: fleet[1], Interrupting: true})
			}
		})
	}
}
