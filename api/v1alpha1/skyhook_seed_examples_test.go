package v1alpha1_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// Every manifest of the reference system in test/reference/testdata/seed-examples is
// accepted as it is and reads back meaning the same: the typed spec decoded
// strictly from the file (so every field in it is known to the API) equals
// the spec the apiserver stored, once the documented defaults are added.
func TestSkyhookSeedExamplesAreAcceptedUnchanged(t *testing.T) {
	c := k8sClient(t)
	for file, data := range testenv.SeedExamples(t) {
		t.Run(file, func(t *testing.T) {
			var want skyhookv1.Skyhook
			if err := yaml.UnmarshalStrict(data, &want); err != nil {
				t.Fatalf("the API types do not cover the manifest: %v", err)
			}

			sent := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(data, &sent.Object); err != nil {
				t.Fatal(err)
			}
			if err := c.Create(context.Background(), sent); err != nil {
				t.Fatalf("rejected: %v", err)
			}
			cleanup(t, c, sent)

			var got skyhookv1.Skyhook
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(sent), &got); err != nil {
				t.Fatal(err)
			}
			if want.Spec.Priority == 0 {
				want.Spec.Priority = skyhookv1.DefaultPriority
			}
			if want.Spec.Sequencing == "" {
				want.Spec.Sequencing = skyhookv1.SequencingNode // the schema's default, as upstream's
			}
			if !equality.Semantic.DeepEqual(want.Spec, got.Spec) {
				wantYAML, _ := yaml.Marshal(want.Spec)
				gotYAML, _ := yaml.Marshal(got.Spec)
				t.Fatalf("stored spec differs from the manifest's\nwant:\n%s\ngot:\n%s", wantYAML, gotYAML)
			}
			if len(want.Spec.Packages) == 0 {
				t.Fatal("the example declares no packages; the comparison would prove little")
			}
			if !equality.Semantic.DeepEqual(want.Labels, got.Labels) {
				t.Fatalf("labels: want %v, got %v", want.Labels, got.Labels)
			}
		})
	}
}
