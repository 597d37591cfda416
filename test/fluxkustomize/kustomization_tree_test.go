package fluxkustomize

import (
	"strings"
	"testing"
	"time"
)

// flux tree kustomization lists what the Kustomization applied, from its
// inventory: the Skyhooks and the DeploymentPolicy.
func TestFluxTreeListsTheSkyhooks(t *testing.T) {
	// Skyhooks selecting no node are complete at once.
	f, commit := newFleet(t, "tree", map[string]string{
		"skyhooks/a.yaml":      skyhookYAML("tree-a", "none", oneAtATime, "1.0.0", nil),
		"skyhooks/b.yaml":      skyhookYAML("tree-b", "none", oneAtATime, "1.0.0", nil),
		"skyhooks/policy.yaml": policyYAML("tree-policy"),
	}, "tree-a", "tree-b")
	waitReady(t, f, commit, 2*time.Minute)
	out := flux(t, "tree", "kustomization", kustomizationName, "-n", f.ns)
	t.Logf("flux tree kustomization %s -n %s:\n%s", kustomizationName, f.ns, out)
	for _, want := range []string{"Kustomization/tree/" + kustomizationName, "Skyhook/tree-a", "Skyhook/tree-b", "DeploymentPolicy/tree-policy"} {
		if !strings.Contains(out, want) {
			t.Errorf("flux tree does not list %s", want)
		}
	}
}
