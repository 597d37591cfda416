package helm_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/config/helm"
)

// nodewrightDeployment is the operator Deployment a NodeWright v0.20
// release named nodewright leaves: the same name as this chart gives that
// release, but NodeWright's selector (app.kubernetes.io/name: nodewright),
// which a Deployment can never change.
const nodewrightDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nodewright-controller-manager
  namespace: nodewright
  annotations:
    meta.helm.sh/release-name: %s
    meta.helm.sh/release-namespace: nodewright
spec:
  replicas: 0
  selector:
    matchLabels:
      control-plane: controller-manager
      app.kubernetes.io/name: nodewright
      app.kubernetes.io/instance: nodewright
  template:
    metadata:
      labels:
        control-plane: controller-manager
        app.kubernetes.io/name: nodewright
        app.kubernetes.io/instance: nodewright
    spec:
      containers:
      - name: manager
        image: ghcr.io/nvidia/nodewright/operator:v0.20.0
`

// `helm upgrade` of a NodeWright v0.20 release to this chart with the
// release's values.yaml unchanged, against the real apiserver: the new
// Deployment cannot be applied over NodeWright's (its selector is
// immutable); the rendered pre-upgrade hook's command leaves a Deployment
// of another release alone, deletes the release's own, after which the
// rendered Deployment applies; run again it finds nothing to do. Then this
// operator starts with exactly that Deployment's args and env (so every
// value NodeWright's file passes is one it accepts) and becomes ready.
func TestNodeWrightV020ReleaseUpgrades(t *testing.T) {
	crds, err := config.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if err := env.InstallCRDs(envtest.CRDInstallOptions{CRDs: crds}); err != nil {
		t.Fatal(err)
	}
	rel := helm.Release{Name: "nodewright", Namespace: "nodewright"}
	kubectl(t, "create", "namespace", rel.Namespace)
	rendered := render(t, rel, nodewrightV020Values(t))
	manager := buildManager(t)
	var renderedDeployment string
	for _, m := range rendered.Manifests {
		if m.Head.Kind == "Deployment" {
			renderedDeployment = m.Content
		}
	}
	uid := func() string {
		out, err := env.Kubectl("-n", rel.Namespace, "get", "deployment", "nodewright-controller-manager", "-o", "jsonpath={.metadata.uid}")
		if err != nil {
			return "" // gone (or unreadable, which the checks then report)
		}
		return out
	}

	apply(t, fmt.Sprintf(nodewrightDeployment, "someone-else"))
	if out, err := applyErr(t, renderedDeployment); err == nil || !strings.Contains(out, "field is immutable") {
		t.Fatalf("the rendered Deployment applied over NodeWright's selector (%v): %s", err, out)
	}
	before := uid()
	if out := runMigrationHook(t, rendered, manager, rel.Namespace); !strings.Contains(out, "left alone") || uid() != before {
		t.Errorf("a Deployment of another release was not left alone:\n%s", out)
	}

	apply(t, fmt.Sprintf(nodewrightDeployment, rel.Name))
	if out := runMigrationHook(t, rendered, manager, rel.Namespace); !strings.Contains(out, "deleted") || uid() != "" {
		t.Fatalf("NodeWright's Deployment was not deleted (uid %q):\n%s", uid(), out)
	}
	apply(t, renderedDeployment, "--server-side", "--field-manager=helm-test")
	after := uid()
	if out := runMigrationHook(t, rendered, manager, rel.Namespace); !strings.Contains(out, "nothing to migrate") || uid() != after {
		t.Errorf("the hook acted on the chart's own Deployment:\n%s", out)
	}

	container := deployment(t, rendered).Spec.Template.Spec.Containers[0]
	ports, err := proc.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	args := append(expand(container.Args, rel.Namespace),
		"--local-webhook-host=localhost", fmt.Sprintf("--webhook-port=%d", ports[0]), "--cert-dir="+t.TempDir(),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", ports[1]), fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports[2]))
	operator := start(t, manager, args, podEnv(container.Env, rel.Namespace))
	operator.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[2]))
	// The operator made its webhook configurations with the label
	// NodeWright's tools select them by.
	if out := kubectl(t, "get", "mutatingwebhookconfiguration", "-l", config.WebhookConfigLabel, "-o", "name"); !strings.Contains(out, config.MutatingWebhookName) {
		t.Errorf("no mutating configuration selected by %s: %q", config.WebhookConfigLabel, out)
	}
	operator.stop(t)
}

// runMigrationHook runs the rendered pre-upgrade Job's command as the
// kubelet would start it; it must succeed. Its output.
func runMigrationHook(t *testing.T, rendered *helm.Rendered, manager, namespace string) string {
	t.Helper()
	c := hookJob(t, rendered, "nodewright-selector-migration").Spec.Template.Spec.Containers[0]
	cmd := exec.Command(manager, expand(c.Args, namespace)...)
	cmd.Env = append(append(os.Environ(), "KUBECONFIG="+env.Kubeconfig), podEnv(c.Env, namespace)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the selector migration hook failed: %v\n%s", err, out)
	}
	return string(out)
}

// applyErr is apply that returns kubectl's failure instead of failing.
func applyErr(t *testing.T, manifests string) (string, error) {
	t.Helper()
	f := t.TempDir() + "/manifests.yaml"
	if err := os.WriteFile(f, []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	return env.Kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=helm-test", "-f", f)
}
