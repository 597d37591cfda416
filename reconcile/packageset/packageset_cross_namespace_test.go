package packageset_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/packageset"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// With the operator's default (--no-cross-namespace-refs), a PackageSet
// whose sourceRef names another namespace is refused: Stalled and not
// Ready with reason AccessDenied, the message naming the field and the
// rule; the source is not even read, and nothing is applied.
func TestPackageSetRefusesASourceInAnotherNamespace(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	for _, ns := range []string{"xns-tenant", "xns-sources"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	src := newSource(t, "xns-sources", "shared-repo")
	src.publish("main@sha1:1111", map[string]string{"sets/gpu.yaml": skyhookManifest("ps-xns", "1.0.0")})
	ps := &skyhookv1.PackageSet{
		ObjectMeta: metav1.ObjectMeta{Name: "borrowed", Namespace: "xns-tenant"},
		Spec: skyhookv1.PackageSetSpec{
			SourceRef: skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "shared-repo", Namespace: "xns-sources"},
			Path:      "sets", Interval: metav1.Duration{Duration: time.Hour}, RetryInterval: &metav1.Duration{Duration: time.Second},
		},
	}
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ps) })
	got := waitPackageSet(t, client.ObjectKeyFromObject(ps), func(p *skyhookv1.PackageSet) bool { return conditions.IsStalled(p) })
	if reason := conditions.GetReason(got, meta.ReadyCondition); conditions.IsReady(got) || reason != packageset.AccessDeniedReason {
		t.Errorf("Ready is %v for %s; want False for %s", conditions.IsReady(got), reason, packageset.AccessDeniedReason)
	}
	msg := conditions.GetMessage(got, meta.ReadyCondition)
	for _, want := range []string{`spec.sourceRef.namespace "xns-sources"`, "cross-namespace references are not allowed", "--no-cross-namespace-refs", `namespace "xns-tenant"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("Ready says %q; want %q in it", msg, want)
		}
	}
	if got.Status.LastAttemptedRevision != "" || got.Status.Inventory != nil {
		t.Errorf("status %+v; want the source unread and nothing applied", got.Status)
	}
	testenv.WaitWarning(t, env, "borrowed", packageset.AccessDeniedReason, "xns-sources")
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-xns"}, &skyhookv1.Skyhook{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Skyhook of the other namespace's source was applied: %v", err)
	}
}

// A dependsOn entry in another namespace is refused the same way: its
// Ready condition would tell the tenant about another namespace's set.
func TestPackageSetRefusesADependencyInAnotherNamespace(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	for _, ns := range []string{"xdep-tenant", "xdep-other"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	src := newSource(t, "xdep-tenant", "own-repo")
	src.publish("main@sha1:2222", map[string]string{"sets/gpu.yaml": skyhookManifest("ps-xdep", "1.0.0")})
	ps := &skyhookv1.PackageSet{
		ObjectMeta: metav1.ObjectMeta{Name: "leaning", Namespace: "xdep-tenant"},
		Spec: skyhookv1.PackageSetSpec{
			SourceRef: skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "own-repo"},
			DependsOn: []meta.NamespacedObjectReference{{Name: "base", Namespace: "xdep-other"}},
			Path:      "sets", Interval: metav1.Duration{Duration: time.Hour}, RetryInterval: &metav1.Duration{Duration: time.Second},
		},
	}
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ps) })
	got := waitPackageSet(t, client.ObjectKeyFromObject(ps), func(p *skyhookv1.PackageSet) bool { return conditions.IsStalled(p) })
	if reason := conditions.GetReason(got, meta.ReadyCondition); reason != packageset.AccessDeniedReason {
		t.Errorf("Ready reason %s; want %s", reason, packageset.AccessDeniedReason)
	}
	if msg := conditions.GetMessage(got, meta.ReadyCondition); !strings.Contains(msg, `spec.dependsOn[0].namespace "xdep-other"`) {
		t.Errorf("Ready says %q; want the dependsOn entry named", msg)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-xdep"}, &skyhookv1.Skyhook{}); !apierrors.IsNotFound(err) {
		t.Errorf("the set was applied although its dependency was refused: %v", err)
	}
}
