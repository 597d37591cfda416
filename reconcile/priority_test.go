package reconcile

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func prioritised(name string, priority int, pool string) skyhookv1.Skyhook {
	sk := skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}}}
	sk.Spec.Priority = priority
	sk.Spec.NodeSelector = metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}}
	return sk
}

func TestGoesBeforeIsLowerPriorityThenName(t *testing.T) {
	driver, tuning, tuningToo := prioritised("driver", 100, "a"), prioritised("tuning", 200, "a"), prioritised("atuning", 200, "a")
	for _, tc := range []struct {
		other, sk *skyhookv1.Skyhook
		want      bool
	}{
		{&driver, &tuning, true},
		{&tuning, &driver, false},
		{&tuningToo, &tuning, true}, // same priority: the name that sorts first
		{&tuning, &tuningToo, false},
		{&tuning, &tuning, false}, // never before itself
	} {
		if got := goesBefore(tc.other, tc.sk); got != tc.want {
			t.Errorf("goesBefore(%s, %s) = %v, want %v", tc.other.Name, tc.sk.Name, got, tc.want)
		}
	}
}

func TestSelectorsOfSkipsDisabledAndDeletedSkyhooks(t *testing.T) {
	disabled, deleted, paused, bad := prioritised("disabled", 1, "a"), prioritised("deleted", 1, "a"), prioritised("paused", 1, "a"), prioritised("bad", 1, "a")
	disabled.Annotations[skyhookv1.DisableAnnotation] = "true"
	deleted.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	paused.Annotations[skyhookv1.PauseAnnotation] = "true"
	bad.Spec.NodeSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}
	other := prioritised("other", 1, "a")
	kept := selectorsOf([]*skyhookv1.Skyhook{&disabled, &deleted, &paused, &bad, &other},
		func(sk *skyhookv1.Skyhook) bool { return sk.Name != "other" })
	var names []string
	for _, k := range kept {
		names = append(names, k.name())
	}
	// A paused Skyhook still holds the ones after it; a selector that does
	// not parse selects nothing.
	if !slices.Equal(names, []string{"paused"}) {
		t.Fatalf("selectorsOf kept %v, want [paused]", names)
	}
}

func TestWaitingForNamesTheFirstSkyhookNotCompleteOnTheNode(t *testing.T) {
	driver, elsewhere, runtime := prioritised("driver", 1, "gpu"), prioritised("elsewhere", 2, "cpu"), prioritised("runtime", 3, "gpu")
	ahead := selectorsOf([]*skyhookv1.Skyhook{&driver, &elsewhere, &runtime}, func(*skyhookv1.Skyhook) bool { return true })
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"pool": "gpu"}}}
	if got := waitingFor(ahead, node); got != "driver" {
		t.Fatalf("waitingFor = %q, want driver", got)
	}
	node.Labels[skyhookv1.StatusKey("driver")] = string(skyhookv1.StatusComplete)
	if got := waitingFor(ahead, node); got != "runtime" {
		t.Fatalf("driver complete: waitingFor = %q, want runtime (elsewhere does not select the node)", got)
	}
	node.Labels[skyhookv1.StatusKey("runtime")] = string(skyhookv1.StatusComplete)
	if got := waitingFor(ahead, node); got != "" {
		t.Fatalf("all complete: waitingFor = %q, want none", got)
	}
}
