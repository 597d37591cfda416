package helm_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/config/helm"
)

func readValues(path string) (map[string]any, error) {
	values, err := chartutil.ReadValuesFile(path)
	return values.AsMap(), err
}

// helm lint, as strict as `helm lint --strict`: no warning, no error, for
// the default values, for every option on and for NodeWright v0.20's values.
func TestChartLints(t *testing.T) {
	for name, values := range map[string]map[string]any{"default": nil, "all-on": allOn(t), "nodewright-v0.20": nodewrightV020Values(t)} {
		linter := lint.All(helm.ChartDir, values, "skyhook-system", false)
		for _, m := range linter.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("%s values: %s", name, m)
			}
		}
	}
}

// The kustomize bases are the chart rendered: what `make generate` wrote is
// what the chart renders now (make verify-generated checks the same on CI).
func TestKustomizeBasesAreTheRenderedChart(t *testing.T) {
	for _, base := range helm.Bases {
		written, err := os.ReadFile(filepath.Join("..", base.Dir, "skyhook-operator.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		want := render(t, helm.Default, base.Values()).YAML()
		if !strings.HasSuffix(string(written), want) {
			t.Errorf("config/%s/skyhook-operator.yaml is not the chart rendered: run make generate", base.Dir)
		}
	}
}

// The rendered chart applies to the real apiserver with server-side apply,
// for the default values and with every option on; the hooks pass a
// server-side dry run (applied for real, the cleanup Job would run).
func TestChartAppliesServerSide(t *testing.T) {
	installStandIns(t)
	kubectl(t, "create", "namespace", "skyhook-system")
	cases := []struct {
		name   string
		rel    helm.Release
		values map[string]any
	}{
		{"default", helm.Default, nil},
		{"all-on", helm.Release{Name: "fleet", Namespace: "skyhook-fleet"}, allOn(t)},
	}
	for _, c := range cases {
		rendered := render(t, c.rel, c.values)
		out := apply(t, rendered.YAML(), "--server-side", "--field-manager=helm-test")
		for _, kind := range rendered.Kinds() {
			name := kind[strings.Index(kind, "/"):]
			if !strings.Contains(out, name+" serverside-applied") {
				t.Errorf("%s values: %s not applied:\n%s", c.name, kind, out)
			}
		}
		for _, hook := range rendered.Hooks {
			apply(t, hook.Manifest, "--server-side", "--dry-run=server", "--field-manager=helm-test")
		}
	}
}

// Every option of the all-on values reaches the objects it is about.
func TestAllOnValuesReachTheObjects(t *testing.T) {
	rendered := render(t, helm.Release{Name: "fleet", Namespace: "skyhook-fleet"}, allOn(t))
	kinds := rendered.Kinds()
	for _, want := range []string{
		"ServiceMonitor/fleet-skyhook-controller-manager", "PrometheusRule/fleet-skyhook-alerts",
		"NetworkPolicy/fleet-skyhook-controller-manager", "Namespace/skyhook-fleet",
		"PodDisruptionBudget/fleet-skyhook-controller-manager-pdb", "Certificate/fleet-skyhook-webhook-cert",
		"MutatingWebhookConfiguration/skyhook-mutating-webhooks", "ValidatingWebhookConfiguration/skyhook-validating-webhooks",
		"ConfigMap/fleet-skyhook-grafana-dashboard", "LimitRange/fleet-skyhook-default-limits", "ClusterRole/fleet-skyhook-metrics-reader", "ClusterRoleBinding/fleet-skyhook-metrics-reader", "ClusterRole/fleet-skyhook-viewer-role", "ClusterRole/fleet-skyhook-editor-role", "Service/fleet-skyhook-webhook",
	} {
		if !slices.Contains(kinds, want) {
			t.Errorf("no %s among %v", want, kinds)
		}
	}
	if slices.Contains(kinds, "Issuer/fleet-skyhook-selfsigned") {
		t.Error("a self-signed Issuer is made although issuerRef names one")
	}
	dep := deployment(t, rendered)
	pod := dep.Spec.Template.Spec
	manager := pod.Containers[0]
	args := strings.Join(manager.Args, " ")
	for _, want := range []string{
		"--certs=external", "--webhook-service=fleet-skyhook-webhook", "--zap-log-level=debug",
		"--metrics-bind-address=:9090", "--metrics-secure=true", "--health-probe-bind-address=:9091",
		"--agent-image=registry.example.com/mirror/skyhook-agent@sha256:0000000000000000000000000000000000000000000000000000000000000002",
		"--pause-image=registry.example.com/mirror/pause:3.10", "--runtime-required-taint=example.com/runtime=pending:NoExecute",
		"--image-pull-secret=mirror-pull,nvcr-pull", "--stage-timeout=30m", "--reboot-timeout=15m",
		"--default-service-account=packageset-applier", "--no-cross-namespace-refs=false",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("the operator's args lack %s: %s", want, args)
		}
	}
	checks := map[string]bool{
		"replicas 3":         *dep.Spec.Replicas == 3,
		"image tag@digest":   manager.Image == "registry.example.com/mirror/skyhook-operator:1.2.3@sha256:0000000000000000000000000000000000000000000000000000000000000001",
		"two pull secrets":   len(pod.ImagePullSecrets) == 2,
		"priority class":     pod.PriorityClassName == "system-cluster-critical",
		"toleration":         len(pod.Tolerations) == 1 && pod.Tolerations[0].Key == "dedicated",
		"host network":       pod.HostNetwork && pod.DNSPolicy == "ClusterFirstWithHostNet",
		"affinity":           len(pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions) == 3,
		"pod label":          dep.Spec.Template.Labels["team"] == "fleet",
		"memory 10000×5":     manager.Resources.Requests.Memory().String() == "810Mi" && manager.Resources.Limits.Memory().String() == "1620Mi",
		"cpu 10000×5":        manager.Resources.Requests.Cpu().String() == "2",
		"metrics port":       manager.Ports[1].ContainerPort == 9090,
		"non-root":           *pod.SecurityContext.RunAsNonRoot && pod.SecurityContext.SeccompProfile.Type == "RuntimeDefault",
		"read-only root":     *manager.SecurityContext.ReadOnlyRootFilesystem && !*manager.SecurityContext.AllowPrivilegeEscalation,
		"account annotation": strings.Contains(manifest(t, rendered, "ServiceAccount"), "example.com/role: skyhook"),
	}
	for what, ok := range checks {
		if !ok {
			t.Errorf("%s: not as the values say", what)
		}
	}
	if sm := manifest(t, rendered, "ServiceMonitor"); !strings.Contains(sm, "scheme: https") || !strings.Contains(sm, "bearerTokenFile:") {
		t.Errorf("the ServiceMonitor does not scrape the secure metrics with Prometheus's token:\n%s", sm)
	}
	if cleanup := hookJob(t, rendered, "fleet-skyhook-cleanup"); !slices.Contains(cleanup.Spec.Template.Spec.Containers[0].Args, "--cleanup-timeout=290s") {
		t.Errorf("the cleanup hook is not the one the values ask for: %v", cleanup.Spec.Template.Spec.Containers[0].Args)
	}
	if migration := hookJob(t, rendered, "fleet-skyhook-selector-migration"); *migration.Spec.ActiveDeadlineSeconds != 60 ||
		!slices.Contains(migration.Spec.Template.Spec.Containers[0].Args, "--migration-timeout=50s") {
		t.Errorf("the selector migration hook is not the one the values ask for: %d s, %v", *migration.Spec.ActiveDeadlineSeconds, migration.Spec.Template.Spec.Containers[0].Args)
	}
	// The user roles cover NodeWright's kinds as well as Skyhook's.
	for _, role := range []string{"fleet-skyhook-viewer-role", "fleet-skyhook-editor-role"} {
		if text := named(t, rendered, "ClusterRole", role); !strings.Contains(text, "nodewright.nvidia.com") || !strings.Contains(text, "nodewrights") {
			t.Errorf("%s does not cover NodeWrights:\n%s", role, text)
		}
	}
}

// The default resources follow the measured curve (docs/install.md): the
// floor up to about 2,000 nodes of one package, then 0.025 MiB a node and
// 0.012 MiB a node for each package past the first.
func TestResourcesFollowTheEstimates(t *testing.T) {
	for _, c := range []struct {
		nodes, packages int
		memory, cpu     string
	}{
		{1, 1, "128Mi", "100m"},
		{1000, 1, "128Mi", "100m"},
		{1000, 5, "153Mi", "200m"},
		{5000, 1, "205Mi", "500m"},
		{5000, 3, "325Mi", "750m"},
	} {
		dep := deployment(t, render(t, helm.Default, map[string]any{"estimatedNodeCount": c.nodes, "estimatedPackageCount": c.packages}))
		got := dep.Spec.Template.Spec.Containers[0].Resources
		if got.Requests.Memory().String() != c.memory || got.Requests.Cpu().String() != c.cpu {
			t.Errorf("%d nodes × %d packages: memory %s cpu %s, want %s and %s", c.nodes, c.packages, got.Requests.Memory(), got.Requests.Cpu(), c.memory, c.cpu)
		}
	}
}

// deployment is the operator's Deployment among the rendered manifests.
func deployment(t *testing.T, r *helm.Rendered) *appsv1.Deployment {
	t.Helper()
	for _, m := range r.Manifests {
		if m.Head.Kind == "Deployment" {
			dep := &appsv1.Deployment{}
			if err := yaml.UnmarshalStrict([]byte(m.Content), dep); err != nil {
				t.Fatal(err)
			}
			return dep
		}
	}
	t.Fatal("no Deployment rendered")
	return nil
}

// manifest is the first rendered manifest of kind.
func manifest(t *testing.T, r *helm.Rendered, kind string) string {
	t.Helper()
	for _, m := range r.Manifests {
		if m.Head.Kind == kind {
			return m.Content
		}
	}
	t.Fatalf("no %s rendered", kind)
	return ""
}

// named is the rendered manifest of that kind and name.
func named(t *testing.T, r *helm.Rendered, kind, name string) string {
	t.Helper()
	for _, m := range r.Manifests {
		if m.Head.Kind == kind && m.Head.Metadata.Name == name {
			return m.Content
		}
	}
	t.Fatalf("no %s/%s rendered", kind, name)
	return ""
}

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := env.Kubectl(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// apply pipes manifests to kubectl apply -f -.
func apply(t *testing.T, manifests string, flags ...string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(f, []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	return kubectl(t, append([]string{"apply", "-f", f}, flags...)...)
}
