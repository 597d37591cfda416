package v1alpha1_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/test/testenv"
)

// The samples shipped in config/samples apply as they are.
func TestSamplesApply(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "config", "samples", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("want the Skyhook, DeploymentPolicy and PackageSet samples, found %v (%v)", files, err)
	}
	c := k8sClient(t)
	kinds := map[string]bool{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			t.Fatal(err)
		}
		if ns := obj.GetNamespace(); ns != "" {
			ensureNamespace(t, ns)
		}
		if err := c.Create(context.Background(), obj); err != nil {
			t.Fatalf("%s: %v", filepath.Base(file), err)
		}
		cleanup(t, c, obj)
		kinds[obj.GetKind()] = true
	}
	for _, kind := range []string{"Skyhook", "DeploymentPolicy", "PackageSet"} {
		if !kinds[kind] {
			t.Errorf("no %s sample", kind)
		}
	}
}

func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	ns := fromYAML(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+name)
	c := k8sClient(t)
	if err := c.Create(context.Background(), ns); err != nil && !isAlreadyExists(err) {
		t.Fatal(err)
	}
}
