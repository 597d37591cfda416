package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// kstatusOf is what Flux's health checks (kstatus) make of a Skyhook.
func kstatusOf(t *testing.T, sk *skyhookv1.Skyhook) status.Status {
	t.Helper()
	return kstatusAs(t, sk, skyhookv1.GroupVersion.WithKind(skyhookv1.SkyhookKind))
}

// kstatusAs is what kstatus makes of a rollout read as the given kind.
func kstatusAs(t *testing.T, obj any, gvk schema.GroupVersionKind) status.Status {
	t.Helper()
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: fields}
	u.SetGroupVersionKind(gvk)
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

// kstatus reads a Skyhook right through its life: not Current as created
// (before the operator acted), InProgress while it rolls, Current when
// done. (Failed when stalled: TestFailedBatchHaltsTheRolloutUntilTheSpecChanges.)
func TestKstatusFollowsTheSkyhook(t *testing.T) {
	createNodes(t, simnode.Numbered("kstatus", 1, map[string]string{"pool": "kstatus"})...)
	c := k8sClient(t)
	ctx := context.Background()
	p := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1s"}}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "kstatus"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "kstatus"}},
			Packages:     skyhookv1.Packages{"tuning": p},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	if got := kstatusOf(t, sk); got == status.CurrentStatus {
		t.Errorf("a Skyhook as created reads as %s; want not Current before the operator acted", got)
	}
	rolling := waitSkyhook(t, "kstatus", time.Minute, func(s *skyhookv1.Skyhook) bool { return conditions.IsReconciling(s) })
	if got := kstatusOf(t, rolling); got != status.InProgressStatus {
		t.Errorf("while rolling: %s, want InProgress", got)
	}
	done := waitSkyhook(t, "kstatus", time.Minute, isReady)
	if got := kstatusOf(t, done); got != status.CurrentStatus {
		t.Errorf("when done: %s, want Current (conditions %+v)", got, done.Status.Conditions)
	}
}
