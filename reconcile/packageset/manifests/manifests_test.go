package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadTakesOnlySkyhooksAndPolicies(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", `# a comment
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: gpu}
spec: {}
---
apiVersion: skyhook.nvidia.com/v1alpha1
kind: DeploymentPolicy
metadata: {name: careful}
spec: {default: {budget: {count: 1}}}
`)
	write(t, dir, "sub/b.yml", "apiVersion: skyhook.nvidia.com/v1alpha1\nkind: Skyhook\nmetadata: {name: net}\n")
	write(t, dir, "README.md", "not a manifest")
	objects, problems := Load(dir)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	var names []string
	for _, o := range objects {
		names = append(names, o.File+":"+o.Name())
	}
	if got := strings.Join(names, ","); got != "a.yaml:Skyhook/gpu,a.yaml:DeploymentPolicy/careful,sub/b.yml:Skyhook/net" {
		t.Errorf("objects %s", got)
	}
}

func TestLoadNamesFileAndKindOfEverythingElse(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ok.yaml", "apiVersion: skyhook.nvidia.com/v1alpha1\nkind: Skyhook\nmetadata: {name: gpu}\n")
	write(t, dir, "bad.yaml", `apiVersion: v1
kind: ConfigMap
metadata: {name: sneaky}
---
apiVersion: skyhook.nvidia.com/v1alpha1
kind: PackageSet
metadata: {name: nested}
---
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: gpu}
---
{ not: yaml: [
`)
	_, problems := Load(dir)
	got := strings.Join(problems, "\n")
	for _, want := range []string{
		`bad.yaml: document 1: ConfigMap "sneaky" (v1) is not allowed`,
		`bad.yaml: document 2: kind PackageSet of skyhook.nvidia.com/v1alpha1 is not allowed`,
		`ok.yaml: Skyhook/gpu is also in bad.yaml`,
		`bad.yaml: document 4: not YAML`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if _, problems := Load(t.TempDir()); len(problems) != 1 || !strings.Contains(problems[0], "no Skyhook, NodeWright or DeploymentPolicy manifests") {
		t.Errorf("an empty directory: %v", problems)
	}
}

// A set may carry NodeWright's kinds beside the seeds' ones; a
// DeploymentPolicy of each group with one name are two objects.
func TestLoadTakesNodeWrightsAndTheirPolicies(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "nw.yaml", `apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata: {name: gpu}
---
apiVersion: nodewright.nvidia.com/v1alpha1
kind: DeploymentPolicy
metadata: {name: careful}
---
apiVersion: skyhook.nvidia.com/v1alpha1
kind: DeploymentPolicy
metadata: {name: careful}
---
apiVersion: nodewright.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: wrong-group}
`)
	objects, problems := Load(dir)
	var names []string
	for _, o := range objects {
		names = append(names, o.Name())
	}
	if got := strings.Join(names, ","); got != "NodeWright.nodewright.nvidia.com/gpu,DeploymentPolicy.nodewright.nvidia.com/careful,DeploymentPolicy/careful" {
		t.Errorf("objects %s", got)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "kind Skyhook of nodewright.nvidia.com/v1alpha1 is not allowed") {
		t.Errorf("problems %v", problems)
	}
}
