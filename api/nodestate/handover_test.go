package nodestate

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func TestHandoverMovesTheRecordToATwinWithout(t *testing.T) {
	skyhook, nodewright := skyhookv1.Skyhooks.Named("gpu"), skyhookv1.NodeWrights.Named("gpu")
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1",
		Labels: map[string]string{"skyhook.nvidia.com/status_gpu": "in_progress", "skyhook.nvidia.com/status_other": "complete"},
		Annotations: map[string]string{
			"skyhook.nvidia.com/nodeState_gpu": `{"a|1.0":{"name":"a","version":"1.0","image":"x","stage":"config","state":"complete"}}`,
			"skyhook.nvidia.com/status_gpu":    "in_progress", "skyhook.nvidia.com/config_gpu": `{"a":"k=1"}`,
			"skyhook.nvidia.com/interrupt_gpu": "rec", "skyhook.nvidia.com/nodeState_other": "{}",
		}}}
	before := maps.Clone(node.Annotations)
	if !Handover(node, skyhook, nodewright) {
		t.Fatal("no handover")
	}
	for _, key := range []string{"nodeState_gpu", "status_gpu", "config_gpu", "interrupt_gpu"} {
		if node.Annotations["nodewright.nvidia.com/"+key] != before["skyhook.nvidia.com/"+key] {
			t.Errorf("%s: %q after the handover, want %q", key, node.Annotations["nodewright.nvidia.com/"+key], before["skyhook.nvidia.com/"+key])
		}
		if _, left := node.Annotations["skyhook.nvidia.com/"+key]; left {
			t.Errorf("skyhook.nvidia.com/%s left behind", key)
		}
	}
	if node.Labels["nodewright.nvidia.com/status_gpu"] != "in_progress" || node.Labels["skyhook.nvidia.com/status_gpu"] != "" {
		t.Errorf("labels after the handover: %v", node.Labels)
	}
	if node.Annotations["skyhook.nvidia.com/nodeState_other"] != "{}" || node.Labels["skyhook.nvidia.com/status_other"] != "complete" {
		t.Errorf("another Skyhook's record was touched: %v %v", node.Annotations, node.Labels)
	}
	if Handover(node, skyhook, nodewright) {
		t.Error("a second handover changed the node")
	}
	state, err := Read(node, nodewright)
	if err != nil || state[skyhookv1.NodeStateKey("a", "1.0")].State != skyhookv1.StateComplete {
		t.Errorf("the twin reads %v, %v", state, err)
	}
}

// NodeWright's migration copied the keys and left the old ones: the twin's
// own record is kept, the copies go.
func TestHandoverDropsStaleCopiesBesideTheTwinsRecord(t *testing.T) {
	skyhook, nodewright := skyhookv1.Skyhooks.Named("gpu"), skyhookv1.NodeWrights.Named("gpu")
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1",
		Labels: map[string]string{"skyhook.nvidia.com/status_gpu": "complete", "nodewright.nvidia.com/status_gpu": "in_progress"},
		Annotations: map[string]string{
			"skyhook.nvidia.com/nodeState_gpu":    `{"a|1.0":{"name":"a","version":"1.0","image":"x","stage":"config","state":"complete"}}`,
			"nodewright.nvidia.com/nodeState_gpu": `{"a|2.0":{"name":"a","version":"2.0","image":"x","stage":"apply","state":"in_progress"}}`,
			"skyhook.nvidia.com/version_gpu":      "v0.17.0", "nodewright.nvidia.com/version_gpu": "v0.20.0",
		}}}
	want := map[string]string{
		"nodewright.nvidia.com/nodeState_gpu": node.Annotations["nodewright.nvidia.com/nodeState_gpu"],
		"nodewright.nvidia.com/version_gpu":   "v0.20.0",
	}
	if !Handover(node, skyhook, nodewright) {
		t.Fatal("no handover")
	}
	if !maps.Equal(node.Annotations, want) || !maps.Equal(node.Labels, map[string]string{"nodewright.nvidia.com/status_gpu": "in_progress"}) {
		t.Errorf("after the handover: annotations %v labels %v", node.Annotations, node.Labels)
	}
}
