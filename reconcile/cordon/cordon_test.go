package cordon

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func apply(t *testing.T, node *corev1.Node, patch []byte) {
	t.Helper()
	var p struct {
		Metadata struct{ Annotations map[string]*string }
		Spec     struct{ Unschedulable *bool }
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatal(err)
	}
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	for k, v := range p.Metadata.Annotations {
		if v == nil {
			delete(node.Annotations, k)
		} else {
			node.Annotations[k] = *v
		}
	}
	node.Spec.Unschedulable = p.Spec.Unschedulable != nil && *p.Spec.Unschedulable
}

func TestOnlyTheOwnCordonIsLifted(t *testing.T) {
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "demo", UID: "u1"}}
	other := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "other", UID: "u2"}}
	node := &corev1.Node{}
	patch, err := Patch(node, sk)
	if err != nil || patch == nil {
		t.Fatalf("no cordon patch: %v", err)
	}
	apply(t, node, patch)
	if !node.Spec.Unschedulable || !OwnedBy(node, sk) {
		t.Fatalf("after the cordon: %+v", node)
	}
	if again, _ := Patch(node, other); again != nil {
		t.Errorf("another Skyhook re-signed a cordon it did not place: %s", again)
	}
	if r, _ := Release(node, other); r != nil {
		t.Errorf("another Skyhook lifted the cordon: %s", r)
	}
	recreated := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "demo", UID: "u3"}}
	if r, _ := Release(node, recreated); r != nil {
		t.Errorf("a Skyhook recreated under the same name lifted the old one's cordon: %s", r)
	}
	release, _ := Release(node, sk)
	apply(t, node, release)
	if node.Spec.Unschedulable || node.Annotations[Annotation] != "" {
		t.Errorf("after the release: %+v", node)
	}

	admins := &corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true}}
	if p, _ := Patch(admins, sk); p != nil {
		t.Errorf("signed an admin's cordon: %s", p)
	}
	if r, _ := Release(admins, sk); r != nil {
		t.Errorf("lifted an admin's cordon: %s", r)
	}
}

// The cordon carries NodeWright's mark (cordon_<skyhook>: "true") too, and
// a cordon NodeWright placed (its mark, no signature) is the Skyhook's after
// a takeover; a signature of another Skyhook wins over the mark.
func TestNodeWrightsCordonMark(t *testing.T) {
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "demo", UID: "u1"}}
	node := &corev1.Node{}
	patch, _ := Patch(node, sk)
	apply(t, node, patch)
	if node.Annotations["skyhook.nvidia.com/cordon_demo"] != "true" {
		t.Fatalf("no cordon_demo mark: %v", node.Annotations)
	}
	release, _ := Release(node, sk)
	apply(t, node, release)
	if _, ok := node.Annotations["skyhook.nvidia.com/cordon_demo"]; ok {
		t.Errorf("the mark outlived the cordon: %v", node.Annotations)
	}

	upstream := &corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true},
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"skyhook.nvidia.com/cordon_demo": "true"}}}
	if !OwnedBy(upstream, sk) {
		t.Error("NodeWright's cordon of demo is not taken for demo's")
	}
	if OwnedBy(upstream, &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "other", UID: "u2"}}) {
		t.Error("NodeWright's cordon of demo is taken for another Skyhook's")
	}
	upstream.Annotations[Annotation] = "other/u2"
	if OwnedBy(upstream, sk) {
		t.Error("a cordon signed by another Skyhook is taken for demo's by its mark")
	}
}

// A NodeWright signs and marks its cordons under nodewright.nvidia.com/,
// and does not take a Skyhook's cordon of the same name for its own.
func TestNodeWrightsCordonsAreUnderItsPrefix(t *testing.T) {
	nw := &skyhookv1.Skyhook{TypeMeta: metav1.TypeMeta{APIVersion: "nodewright.nvidia.com/v1alpha1", Kind: "NodeWright"},
		ObjectMeta: metav1.ObjectMeta{Name: "demo", UID: "u3"}}
	node := &corev1.Node{}
	patch, _ := Patch(node, nw)
	apply(t, node, patch)
	if node.Annotations["nodewright.nvidia.com/cordoned-by"] != "demo/u3" || node.Annotations["nodewright.nvidia.com/cordon_demo"] != "true" ||
		node.Annotations[Annotation] != "" {
		t.Fatalf("NodeWright's cordon: %v", node.Annotations)
	}
	skyhook := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "demo", UID: "u3"}}
	if OwnedBy(node, skyhook) {
		t.Error("the NodeWright's cordon is taken for the Skyhook's of the same name")
	}
	release, _ := Release(node, nw)
	apply(t, node, release)
	if node.Spec.Unschedulable || len(node.Annotations) != 0 {
		t.Errorf("released: unschedulable %v, annotations %v", node.Spec.Unschedulable, node.Annotations)
	}
}

// A cordon a Skyhook placed becomes its NodeWright twin's: the twin lifts
// it, the Skyhook no longer can; a cordon of another name stays where it is.
func TestHandoverGivesTheCordonToTheTwin(t *testing.T) {
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "gpu", UID: "u1"}}
	twin := &skyhookv1.Skyhook{TypeMeta: metav1.TypeMeta{APIVersion: "nodewright.nvidia.com/v1alpha1", Kind: "NodeWright"},
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", UID: "u2"}}
	node := &corev1.Node{}
	patch, _ := Patch(node, sk)
	apply(t, node, patch)
	if !Handover(node, skyhookv1.RefOf(sk), twin) {
		t.Fatal("no handover of the Skyhook's cordon")
	}
	if OwnedBy(node, sk) || !OwnedBy(node, twin) {
		t.Fatalf("after the handover the cordon is not the twin's alone: %v", node.Annotations)
	}
	if node.Annotations["nodewright.nvidia.com/cordon_gpu"] != "true" || node.Annotations["skyhook.nvidia.com/cordon_gpu"] != "" {
		t.Errorf("cordon_ marks after the handover: %v", node.Annotations)
	}
	if Handover(node, skyhookv1.RefOf(sk), twin) {
		t.Error("a second handover changed the node")
	}
	other := &corev1.Node{}
	patch, _ = Patch(other, &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "other", UID: "u3"}})
	apply(t, other, patch)
	if Handover(other, skyhookv1.RefOf(sk), twin) {
		t.Errorf("the cordon of another Skyhook was handed over: %v", other.Annotations)
	}
}

// A node whose cordon is also NodeWright's runtimeRequiredCordon stays
// cordoned when a rollout lifts its own: only the rollout's marks go.
func TestReleaseKeepsTheRuntimeRequiredCordon(t *testing.T) {
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "demo", UID: "u1"}}
	node := &corev1.Node{}
	patch, _ := Patch(node, sk)
	apply(t, node, patch)
	node.Annotations["nodewright.nvidia.com/runtimeRequiredCordon"] = "true"
	release, err := Release(node, sk)
	if err != nil || release == nil || strings.Contains(string(release), "unschedulable") {
		t.Fatalf("release %s, %v: want the marks removed and the cordon kept", release, err)
	}
	if !strings.Contains(string(release), `"skyhook.nvidia.com/cordoned-by":null`) {
		t.Errorf("release %s leaves the signature", release)
	}
}
