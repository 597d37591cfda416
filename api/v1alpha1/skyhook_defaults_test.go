package v1alpha1_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// What is stored is what runs: the schema's defaults are in the object the
// apiserver returns. observedGeneration starts at -1 so that kstatus (and
// Flux health checks) do not take a Skyhook the operator has not looked at
// yet for current.
func TestSkyhookDefaultsAreStored(t *testing.T) {
	c := k8sClient(t)
	var got skyhookv1.Skyhook
	createAndGet(t, c, skyhookYAML("defaults", `
  packages:
    tuning:
      version: 1.0.0
      image: ghcr.io/x/tuning
`), &got)
	if got.Spec.Priority != skyhookv1.DefaultPriority {
		t.Errorf("spec.priority = %d, want %d", got.Spec.Priority, skyhookv1.DefaultPriority)
	}
	if got.Status.ObservedGeneration != -1 {
		t.Errorf("status.observedGeneration = %d, want -1 before the operator reconciles", got.Status.ObservedGeneration)
	}
	if got.Generation != 1 {
		t.Errorf("metadata.generation = %d, want 1", got.Generation)
	}
}

// status.packageList is there even when empty, as NodeWright's schema
// defaults it: a status write that drops it (the operator's, once a spec
// has no packages) leaves "", which NodeWright's readers compare with
// `packageList: ""` (its explicit-uninstall scenario).
func TestSkyhookPackageListStaysWhenEmpty(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(skyhookv1.GroupVersion.WithKind(skyhookv1.SkyhookKind))
	createAndGet(t, c, skyhookYAML("package-list", "  packages: {}\n"), got)
	requireEmptyPackageList := func(when string) {
		t.Helper()
		if err := c.Get(ctx, client.ObjectKeyFromObject(got), got); err != nil {
			t.Fatal(err)
		}
		if list, found, _ := unstructured.NestedString(got.Object, "status", "packageList"); !found || list != "" {
			t.Errorf("%s: status.packageList %q (there: %t), want \"\" there", when, list, found)
		}
	}
	requireEmptyPackageList("created")
	for _, patch := range []string{`{"status":{"packageList":"tuning:1.0.0"}}`, `{"status":{"packageList":null}}`} {
		if err := c.Status().Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	requireEmptyPackageList("written, then dropped")
}
