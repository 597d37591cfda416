package fleetbudget

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A rollout's cordon marks the node out of service; a stage running marks
// it taken without interrupting; either kind's keys count.
func TestNodeOfReadsEveryKindsKeys(t *testing.T) {
	for _, tc := range []struct {
		what        string
		labels      map[string]string
		annotations map[string]string
		want        Node
	}{
		{"nothing", nil, nil, Node{Name: "n"}},
		{"a NodeWright's cordon", map[string]string{"nodewright.nvidia.com/status_kernel": "in_progress"},
			map[string]string{"nodewright.nvidia.com/cordon_kernel": "true"}, Node{Name: "n", TakenBy: "NodeWright/kernel", Interrupting: true}},
		{"a Skyhook's stage", map[string]string{"skyhook.nvidia.com/status_driver": "in_progress"}, nil, Node{Name: "n", TakenBy: "Skyhook/driver"}},
		{"an erroring one still holds it", map[string]string{"skyhook.nvidia.com/status_driver": "erroring"}, nil, Node{Name: "n", TakenBy: "Skyhook/driver"}},
		{"complete frees it", map[string]string{"skyhook.nvidia.com/status_driver": "complete"}, nil, Node{Name: "n"}},
		{"a drain recorded before its cordon", map[string]string{"skyhook.nvidia.com/status_driver": "in_progress"},
			map[string]string{"skyhook.nvidia.com/interrupt_driver": `{"generation":1,"phase":"drain","since":"2026-12-07T12:00:00Z","packages":["d|1"],"interrupt":{"type":"reboot"}}`},
			Node{Name: "n", TakenBy: "Skyhook/driver", Interrupting: true}},
		{"yielded to workloads, still cordoned", map[string]string{"skyhook.nvidia.com/status_driver": "waiting"},
			map[string]string{"skyhook.nvidia.com/cordon_driver": "true",
				"skyhook.nvidia.com/interrupt_driver": `{"generation":1,"phase":"yielded","since":"2026-12-07T12:00:00Z","packages":["d|1"],"interrupt":{"type":"reboot"}}`},
			Node{Name: "n"}},
		{"the cordon wins over another's stage", map[string]string{"skyhook.nvidia.com/status_a": "in_progress"},
			map[string]string{"skyhook.nvidia.com/cordon_b": "true"}, Node{Name: "n", TakenBy: "Skyhook/b", Interrupting: true}},
	} {
		got := NodeOf(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: tc.labels, Annotations: tc.annotations}})
		if got.TakenBy != tc.want.TakenBy || got.Interrupting != tc.want.Interrupting {
			t.Errorf("%s: %+v, want %+v", tc.what, got, tc.want)
		}
	}
}
