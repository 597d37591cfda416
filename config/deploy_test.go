package config_test

import (
	"os"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/test/clustertest"
)

var env *cluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(clustertest.Main(m, cluster.Options{}, &env))
}

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := env.Kubectl(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The self-managed deployment applies to a real apiserver as it is (for
// real: a server-side dry run cannot create objects in a namespace it only
// pretends to create).
func TestDefaultDeploymentApplies(t *testing.T) {
	out := kubectl(t, "apply", "-k", "default")
	for _, want := range []string{
		"namespace/skyhook-system",
		"customresourcedefinition.apiextensions.k8s.io/skyhooks.skyhook.nvidia.com",
		"clusterrole.rbac.authorization.k8s.io/skyhook-operator-manager-role",
		"clusterrolebinding.rbac.authorization.k8s.io/skyhook-operator-manager-rolebinding",
		"role.rbac.authorization.k8s.io/skyhook-operator-manager-role",
		"rolebinding.rbac.authorization.k8s.io/skyhook-operator-manager-rolebinding",
		"deployment.apps/skyhook-operator-controller-manager",
		"service/skyhook-operator-webhook-service",
		"service/skyhook-operator-controller-manager-metrics-service",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply -k config/default lacks %s:\n%s", want, out)
		}
	}
}

// The cert-manager overlay points the webhooks at the operator's Service,
// asks cert-manager for the CA, and switches the operator to external
// certificates; its webhooks are the ones the operator itself installs.
func TestCertManagerOverlay(t *testing.T) {
	out := kubectl(t, "kustomize", "certmanager")
	if !strings.Contains(out, "--certs=external") {
		t.Error("the operator is not switched to external certificates")
	}
	want, _, err := config.Webhooks(func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{}
	})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, doc := range strings.Split(out, "\n---\n") {
		if !strings.Contains(doc, "kind: MutatingWebhookConfiguration") {
			continue
		}
		found = true
		var got admissionregistrationv1.MutatingWebhookConfiguration
		if err := yaml.UnmarshalStrict([]byte(doc), &got); err != nil {
			t.Fatal(err)
		}
		if got.Name != want.Name || got.Annotations["cert-manager.io/inject-ca-from"] != "skyhook-system/skyhook-operator-webhook-cert" {
			t.Errorf("name %s annotations %v", got.Name, got.Annotations)
		}
		// The label NodeWright's tools select its configurations by, as
		// the operator puts it on the ones it makes.
		if got.Labels[config.WebhookConfigLabel] == "" || got.Labels[config.WebhookConfigLabel] != want.Labels[config.WebhookConfigLabel] {
			t.Errorf("label %s: %q, the operator's is %q", config.WebhookConfigLabel, got.Labels[config.WebhookConfigLabel], want.Labels[config.WebhookConfigLabel])
		}
		if len(got.Webhooks) != len(want.Webhooks) {
			t.Fatalf("%d webhooks, want %d", len(got.Webhooks), len(want.Webhooks))
		}
		for _, w := range got.Webhooks {
			svc := w.ClientConfig.Service
			if svc == nil || svc.Name != "skyhook-operator-webhook-service" || svc.Namespace != "skyhook-system" || svc.Port == nil || *svc.Port != 9443 {
				t.Errorf("webhook %s calls %+v", w.Name, svc)
			}
		}
	}
	if !found {
		t.Fatalf("no MutatingWebhookConfiguration in:\n%s", out)
	}
}
