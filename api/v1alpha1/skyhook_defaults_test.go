package v1alpha1_test

import (
	"testing"

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
