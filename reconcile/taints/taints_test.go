package taints

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAddAndRemoveKeepOtherTaints(t *testing.T) {
	required := corev1.Taint{Key: "skyhook.nvidia.com", Value: "runtime-required", Effect: corev1.TaintEffectNoSchedule}
	gpu := corev1.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "42"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{gpu}}}
	apply := func(p []byte) {
		t.Helper()
		var body struct {
			Metadata struct{ ResourceVersion string }
			Spec     struct{ Taints []corev1.Taint }
		}
		if err := json.Unmarshal(p, &body); err != nil {
			t.Fatal(err)
		}
		if body.Metadata.ResourceVersion != "42" {
			t.Errorf("the patch does not carry the resourceVersion: %s", p)
		}
		node.Spec.Taints = body.Spec.Taints
	}
	p, err := Add(node, required)
	if err != nil || p == nil {
		t.Fatalf("no patch: %v", err)
	}
	apply(p)
	if !Has(node, required) || !Has(node, gpu) {
		t.Fatalf("taints %v", node.Spec.Taints)
	}
	if again, _ := Add(node, required); again != nil {
		t.Errorf("added twice: %s", again)
	}
	p, _ = Remove(node, required)
	apply(p)
	if Has(node, required) || !Has(node, gpu) {
		t.Errorf("after removal: %v", node.Spec.Taints)
	}
	if again, _ := Remove(node, required); again != nil {
		t.Errorf("removed what is not there: %s", again)
	}
	other := corev1.Taint{Key: "skyhook.nvidia.com", Value: "something-else", Effect: corev1.TaintEffectNoSchedule}
	node.Spec.Taints = []corev1.Taint{other}
	if Has(node, required) {
		t.Error("a taint with another value counts as the runtime-required one")
	}
}
