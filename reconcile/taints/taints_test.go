package taints

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
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

// A new node gets the taint and NodeWright's mark; a key with a '/' is
// made a valid annotation name.
func TestAddToNewMarksTheNode(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7"}}
	taint := corev1.Taint{Key: "skyhook.nvidia.com", Value: "runtime-required", Effect: corev1.TaintEffectNoSchedule}
	patch, err := AddToNew(skyhookv1.Skyhooks)(node, taint)
	if err != nil || !strings.Contains(string(patch), `"skyhook.nvidia.com/autoTaint_skyhook.nvidia.com":"true"`) || !strings.Contains(string(patch), `"runtime-required"`) {
		t.Fatalf("patch %s, %v", patch, err)
	}
	if got := AutoTaintAnnotation(skyhookv1.Skyhooks, "nvidia.com/gpu"); got != "skyhook.nvidia.com/autoTaint_nvidia.com_gpu" {
		t.Errorf("annotation for a key with a slash: %s", got)
	}
	if got := AutoTaintAnnotation(skyhookv1.NodeWrights, "nodewright.nvidia.com"); got != "nodewright.nvidia.com/autoTaint_nodewright.nvidia.com" {
		t.Errorf("a NodeWright's mark: %s", got)
	}
	node.Spec.Taints = []corev1.Taint{taint}
	if again, _ := AddToNew(skyhookv1.Skyhooks)(node, taint); again != nil {
		t.Errorf("patched a node that has the taint: %s", again)
	}
}

// The runtime-required taints of both kinds go in one patch; with
// runtimeRequiredCordonAfter the same patch cordons and marks the node.
func TestRemoveTakesEveryRecognisedTaintAndMayCordon(t *testing.T) {
	legacy := corev1.Taint{Key: "skyhook.nvidia.com", Value: "runtime-required", Effect: corev1.TaintEffectNoSchedule}
	current := corev1.Taint{Key: "nodewright.nvidia.com", Value: "runtime-required", Effect: corev1.TaintEffectNoSchedule}
	gpu := corev1.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{legacy, gpu, current}}}
	if !HasAny(node, []corev1.Taint{current}) || HasAny(&corev1.Node{}, []corev1.Taint{current}) {
		t.Error("HasAny")
	}
	p, err := RemoveAndCordon(node, "nodewright.nvidia.com/runtimeRequiredCordon", legacy, current)
	var body struct {
		Metadata struct{ Annotations map[string]string }
		Spec     struct {
			Taints        []corev1.Taint
			Unschedulable bool
		}
	}
	if err != nil || json.Unmarshal(p, &body) != nil {
		t.Fatalf("patch %s, %v", p, err)
	}
	if len(body.Spec.Taints) != 1 || body.Spec.Taints[0] != gpu || !body.Spec.Unschedulable ||
		body.Metadata.Annotations["nodewright.nvidia.com/runtimeRequiredCordon"] != "true" {
		t.Errorf("patch %s", p)
	}
	if none, _ := RemoveAndCordon(&corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{gpu}}}, "m", legacy, current); none != nil {
		t.Errorf("cordoned a node without the taint: %s", none)
	}
}
