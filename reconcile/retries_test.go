package reconcile

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// A failed pod's own attempt number bounds the tries spent when the
// record is behind it (its write was lost after the next try's pod was
// created): that try is not run a second time.
func TestTriesBeforeTakesTheFailedPodsAttemptWhenTheRecordIsBehind(t *testing.T) {
	third := stagePod("apply-2", "1.0.0", skyhookv1.StageApply, 2, "")
	for _, tc := range []struct {
		recorded int32
		want     int32
	}{{recorded: 1, want: 2}, {recorded: 2, want: 2}, {recorded: 3, want: 3}} {
		if got := triesBefore(skyhookv1.PackageStatus{Restarts: tc.recorded}, third, skyhookv1.StageApply); got != tc.want {
			t.Errorf("record says %d tries, pod ran try 2: %d tries before, want %d", tc.recorded, got, tc.want)
		}
	}
}

// Pods of a deleted object of the same kind and name (left for the
// garbage collector) are not the new object's; pods of other owners or
// none are left to the rest of the pass.
func TestOfAnotherObjectIsTheSameKindAndNameWithAnotherUID(t *testing.T) {
	sk := skyhookWith(nil)
	sk.Name, sk.UID = "replace", "new"
	owned := func(kind, name string, uid types.UID) *metav1.ObjectMeta {
		yes := true
		return &metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{Kind: kind, Name: name, UID: uid, Controller: &yes}}}
	}
	for _, tc := range []struct {
		what  string
		owner *metav1.ObjectMeta
		want  bool
	}{
		{"the old object's", owned("Skyhook", "replace", "old"), true},
		{"this object's", owned("Skyhook", "replace", "new"), false},
		{"a Job's (NodeWright's stage Job)", owned("Job", "replace", "job"), false},
		{"another name's", owned("Skyhook", "other", "old"), false},
		{"no owner's", &metav1.ObjectMeta{}, false},
	} {
		pod := stagePod("p", "1.0.0", skyhookv1.StageApply, 0, "")
		pod.OwnerReferences = tc.owner.OwnerReferences
		if got := ofAnotherObject(pod, sk); got != tc.want {
			t.Errorf("a pod of %s: %v, want %v", tc.what, got, tc.want)
		}
	}
}
