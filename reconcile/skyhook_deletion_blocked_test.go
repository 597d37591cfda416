package reconcile_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// A deleted Skyhook that is paused, then disabled, while a package with
// uninstall support is still on its node is held, as NodeWright holds it:
// DeletionBlocked with its reason, and a Warning event DeletionBlocked each
// time the reason changes. Once neither, the uninstall runs and it goes.
func TestDeletionBlockedWarns(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	createNodes(t, simnode.Numbered("delblocked", 1, map[string]string{"pool": "delblocked"})...)
	uninstalls := uninstallPods(t, "delblocked")
	driver := pkg("1.0.0", "ghcr.io/x/driver", nil)
	driver.Uninstall = &skyhookv1.Uninstall{Enabled: true}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "delblocked"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "delblocked"}},
			Packages:     skyhookv1.Packages{"driver": driver},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "delblocked", time.Minute, isReady)

	annotate := func(annotations map[string]any) {
		t.Helper()
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
		if err := c.Patch(ctx, &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "delblocked"}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}
	blocked := func(reason string) func(*skyhookv1.Skyhook) bool {
		return func(s *skyhookv1.Skyhook) bool {
			return conditions.IsTrue(s, skyhookv1.DeletionBlockedCondition) && conditions.GetReason(s, skyhookv1.DeletionBlockedCondition) == reason
		}
	}

	annotate(map[string]any{skyhookv1.PauseAnnotation: "true"})
	if err := c.Delete(ctx, sk); err != nil {
		t.Fatal(err)
	}
	waitSkyhook(t, "delblocked", time.Minute, blocked("PausedWithPendingUninstall"))
	waitWarning(t, "delblocked", "DeletionBlocked", "resume the Skyhook")

	annotate(map[string]any{skyhookv1.PauseAnnotation: nil, skyhookv1.DisableAnnotation: "true"})
	waitSkyhook(t, "delblocked", time.Minute, blocked("DisabledWithPendingUninstall"))
	waitWarning(t, "delblocked", "DeletionBlocked", "enable the Skyhook")
	if len(uninstalls()) != 0 {
		t.Errorf("uninstall pods ran while the deletion was held: %v", keys(uninstalls()))
	}

	annotate(map[string]any{skyhookv1.DisableAnnotation: nil})
	eventually(t, "the Skyhook to be gone", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: "delblocked"}, &skyhookv1.Skyhook{}))
	})
	if uninstalls()["driver"] == nil {
		t.Error("the Skyhook went without uninstalling driver")
	}
}
