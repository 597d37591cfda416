package v1alpha1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// The engine's view of a NodeWright is of NodeWright's kind, and what the
// engine changes in it comes back.
func TestViewIsOfNodeWrightsKindAndComesBack(t *testing.T) {
	nw := &NodeWright{ObjectMeta: metav1.ObjectMeta{Name: "gpu", UID: "u1"}, Spec: skyhookv1.SkyhookSpec{Priority: 5}}
	view := nw.View()
	if skyhookv1.KindOf(view) != skyhookv1.NodeWrights || skyhookv1.RefOf(view).NodeStateAnnotation() != "nodewright.nvidia.com/nodeState_gpu" ||
		view.Spec.Priority != 5 || view.UID != "u1" {
		t.Fatalf("view %+v is not the NodeWright's", view)
	}
	view.Finalizers = []string{skyhookv1.NodeWrights.Finalizer}
	view.Status.Status = skyhookv1.StatusComplete
	nw.Apply(view)
	if len(nw.Finalizers) != 1 || nw.Finalizers[0] != "nodewright.nvidia.com/nodewright" || nw.Status.Status != skyhookv1.StatusComplete {
		t.Fatalf("applied back: %+v %+v", nw.ObjectMeta, nw.Status)
	}
	if skyhookv1.KindOf(&skyhookv1.Skyhook{}) != skyhookv1.Skyhooks {
		t.Fatal("a Skyhook without an apiVersion is not of the Skyhook kind")
	}
}
