package chaos

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// The observer's checks fail when they should: the chaos run's "0
// violations" means something only if each one can be seen.
func TestObserverSeesBrokenPromises(t *testing.T) {
	status := skyhookv1.StatusKey(skyhookName)
	node := func(name, zone, state string, unschedulable bool) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": zone, status: state}},
			Spec: corev1.NodeSpec{Unschedulable: unschedulable}}
	}
	stagePod := func(name, node string, succeeded bool) *corev1.Pod {
		code := int32(1)
		if succeeded {
			code = 0
		}
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name,
				Labels:      map[string]string{stagepod.SkyhookLabel: skyhookName, stagepod.PackageLabel: "kernel", stagepod.StageLabel: "apply"},
				Annotations: map[string]string{stagepod.VersionAnnotation: "1.0.0", stagepod.GenerationAnnotation: "1"}},
			Spec: corev1.PodSpec{NodeName: node, InitContainers: []corev1.Container{{Name: "copy"}, {Name: "apply"}}},
			Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "copy", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
				{Name: "apply", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}},
			}},
		}
	}
	newObs := func() *observer {
		return newObserver(skyhookName, []compartmentBudget{{name: "zone-a", selector: labels.SelectorFromSet(labels.Set{"zone": "a"}), limit: 1}},
			map[string]bool{"admin-cordoned": true})
	}
	for _, tc := range []struct {
		name  string
		feed  func(o *observer)
		wants string // "" for no violation
	}{
		{"within the budget", func(o *observer) {
			o.node(node("a1", "a", "in_progress", false))
			o.node(node("a2", "a", "complete", false))
			o.node(node("b1", "b", "in_progress", false))
		}, ""},
		{"over the budget", func(o *observer) {
			o.node(node("a1", "a", "in_progress", false))
			o.node(node("a2", "a", "erroring", false))
		}, "compartment zone-a had 2 nodes in progress, over its budget of 1"},
		{"an admin's cordon lifted", func(o *observer) {
			o.node(node("admin-cordoned", "b", "complete", false))
		}, "node admin-cordoned, cordoned by an admin, was uncordoned"},
		{"a failed stage retried", func(o *observer) {
			o.pod(stagePod("p1", "a1", false), true)
			o.pod(stagePod("p2", "a1", true), true)
		}, ""},
		{"a succeeded stage run again", func(o *observer) {
			o.pod(stagePod("p1", "a1", true), true)
			o.pod(stagePod("p2", "a1", true), true)
		}, "ran again after it succeeded"},
		{"a succeeded stage whose pod we deleted run again", func(o *observer) {
			o.pod(stagePod("p1", "a1", true), true)
			o.deleted("p1")
			o.pod(stagePod("p2", "a1", true), true)
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newObs()
			tc.feed(o)
			got := strings.Join(o.Violations(), "; ")
			if tc.wants == "" && got != "" || tc.wants != "" && !strings.Contains(got, tc.wants) {
				t.Errorf("violations %q, want %q", got, tc.wants)
			}
		})
	}
}
