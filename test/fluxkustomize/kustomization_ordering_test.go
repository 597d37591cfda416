package fluxkustomize

import (
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"

	"github.com/skyhook-go/skyhook/test/testenv"
)

// A Skyhook and the new DeploymentPolicy it names in one Kustomization are
// refused: kustomize-controller dry-runs every object before applying any,
// and admission refuses a Skyhook naming a policy that does not exist yet.
// Nothing is applied. (The fleets of the other tests put such policies in
// a Kustomization of their own that the Skyhooks' depends on.)
func TestSkyhookAndItsNewPolicyInOneKustomizationAreRefused(t *testing.T) {
	const name = "ordering"
	f, _ := newFleet(t, "ordering", map[string]string{
		"skyhooks/policy.yaml": policyYAML("ordering-policy"),
		"skyhooks/gpu.yaml":    skyhookYAML(name, "none", "deploymentPolicy: ordering-policy", "1.0.0", nil),
	}, name)
	var message string
	testenv.Eventually(t, "the Kustomization to fail", time.Minute, func() bool {
		ready := condition(f.kustomization(t).Conditions, meta.ReadyCondition)
		message = ready.Message
		return ready.Reason == meta.ReconciliationFailedReason
	})
	t.Logf("Ready=False: %s", message)
	if !strings.Contains(message, "Skyhook/"+name+" dry-run failed") || !strings.Contains(message, `deploymentPolicy "ordering-policy" not found`) {
		t.Errorf("Ready says %q; want the Skyhook's dry run refused for the missing policy", message)
	}
	if sk := getSkyhook(t, name); sk.Name != "" {
		t.Error("the Skyhook was applied")
	}
}
