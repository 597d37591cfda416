package helm_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/config/helm"
)

// nodewrightV020Values reads NodeWright chart v0.20.0's values.yaml, kept
// unchanged in testdata (its README says from where).
func nodewrightV020Values(t *testing.T) map[string]any {
	t.Helper()
	values, err := readValues(filepath.Join("testdata", "nodewright-v0.20", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return values
}

// nodewrightEnvReaches says how each of NodeWright's
// controllerManager.manager.env values reaches this operator: a flag
// ("--name") or a variable of the container's env ("NAME"). A value the
// file has and this table lacks fails the test, so a value NodeWright adds
// is looked at rather than silently dropped.
var nodewrightEnvReaches = map[string]string{
	"leaderElection":       "--leader-elect",
	"logLevel":             "--zap-log-level",
	"metricsPort":          "--metrics-bind-address",
	"probePort":            "--health-probe-bind-address",
	"runtimeRequiredTaint": "--runtime-required-taint",
	"pauseImage":           "--pause-image",
	"jobStageTimeout":      "JOB_STAGE_TIMEOUT",
	"jobBackoffLimit":      "JOB_BACKOFF_LIMIT",
	"jobTtlSucceeded":      "JOB_TTL_SUCCEEDED",
	"jobTtlFailed":         "JOB_TTL_FAILED",
	"legacyCleanupDelay":   "LEGACY_CLEANUP_DELAY",
	"publishLegacyMetrics": "PUBLISH_LEGACY_METRICS",
	"reapplyOnReboot":      "REAPPLY_ON_REBOOT",
	"copyDirRoot":          "COPY_DIR_ROOT",
	"agentLogRoot":         "AGENT_LOG_ROOT",
}

// NodeWright v0.20's values.yaml, unchanged, installs this chart and says
// the same here: every controllerManager.manager.env value reaches the
// operator as a flag or as NodeWright's variable, with the file's value; the
// metrics on 8443 through a Service on 8443; the webhook Service derived
// from the release's name; the selector-migration hook on; the object names
// NodeWright gives a release named nodewright, and its old names with
// fullnameOverride: skyhook-operator; the webhook configurations carrying
// the label NodeWright's tools select them by.
func TestNodeWrightV020ValuesInstall(t *testing.T) {
	values := nodewrightV020Values(t)
	rel := helm.Release{Name: "nodewright", Namespace: "nodewright"}
	rendered := render(t, rel, values)
	dep := deployment(t, rendered)
	manager := dep.Spec.Template.Spec.Containers[0]

	// NodeWright's images, pinned to its release, cannot run here: this
	// chart's take their place, and the notes say so.
	if want := "ghcr.io/skyhook-go/skyhook-operator:" + chartAppVersion(t); manager.Image != want ||
		!slices.Contains(manager.Args, "--agent-image=ghcr.io/skyhook-go/skyhook-agent:"+chartAppVersion(t)) {
		t.Errorf("NodeWright's images not replaced: image %s, args %v", manager.Image, manager.Args)
	}
	if !strings.Contains(rendered.Notes, "controllerManager.manager.image names NodeWright's ghcr.io/nvidia/nodewright/operator") ||
		!strings.Contains(rendered.Notes, "controllerManager.manager.agent names NodeWright's ghcr.io/nvidia/nodewright/agent") {
		t.Errorf("the notes do not say the images were replaced:\n%s", rendered.Notes)
	}

	fileEnv := values["controllerManager"].(map[string]any)["manager"].(map[string]any)["env"].(map[string]any)
	if len(fileEnv) < 15 {
		t.Fatalf("%d env values read from NodeWright's file, want its 15: %v", len(fileEnv), fileEnv)
	}
	for key, value := range fileEnv {
		want := fmt.Sprint(value)
		to, known := nodewrightEnvReaches[key]
		switch {
		case !known:
			t.Errorf("NodeWright's controllerManager.manager.env.%s (%q) reaches the operator nowhere this test knows", key, want)
		case strings.HasPrefix(to, "--"):
			if !slices.Contains(manager.Args, to+"="+want) {
				t.Errorf("env.%s %q: no %s=%s among %v", key, want, to, want, manager.Args)
			}
		default:
			if got, ok := envValue(manager.Env, to); !ok || got != want {
				t.Errorf("env.%s %q: %s is %q (set: %v)", key, want, to, got, ok)
			}
		}
	}

	// Metrics: served on :8443 (above), the container's port named metrics
	// is 8443, and the Service's 8443 targets it.
	if port := containerPort(manager, "metrics"); port != 8443 {
		t.Errorf("metrics container port %d, want 8443", port)
	}
	metrics := service(t, rendered, "nodewright-controller-manager-metrics-service")
	if len(metrics.Spec.Ports) != 1 || metrics.Spec.Ports[0].Port != 8443 || metrics.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("metrics Service ports %+v, want 8443 to the metrics port", metrics.Spec.Ports)
	}

	// webhook.serviceName "" derives the Service's name, which the
	// operator is told (its serving certificate names it).
	service(t, rendered, "nodewright-webhook-service")
	if !slices.Contains(manager.Args, "--webhook-service=nodewright-webhook-service") {
		t.Errorf("the operator is not told the webhook Service: %v", manager.Args)
	}

	// The pre-upgrade hook: it checks and deletes this very Deployment,
	// against the selector rendered on it, within jobTimeoutSeconds.
	migration := hookJob(t, rendered, "nodewright-selector-migration")
	if *migration.Spec.ActiveDeadlineSeconds != 120 {
		t.Errorf("selector migration deadline %d, want jobTimeoutSeconds 120", *migration.Spec.ActiveDeadlineSeconds)
	}
	args := migration.Spec.Template.Spec.Containers[0].Args
	var selector []string
	for k, v := range dep.Spec.Selector.MatchLabels {
		selector = append(selector, k+"="+v)
	}
	slices.Sort(selector)
	for _, want := range []string{"--migrate-selector=" + dep.Name, "--release=nodewright", "--selector=" + strings.Join(selector, ",")} {
		if !slices.Contains(args, want) {
			t.Errorf("selector migration args %v lack %s", args, want)
		}
	}
	if hookJob(t, rendered, "nodewright-cleanup").Spec.ActiveDeadlineSeconds == nil {
		t.Error("the cleanup hook has no deadline")
	}

	kinds := rendered.Kinds()
	for _, want := range []string{
		"Deployment/nodewright-controller-manager", "ServiceAccount/nodewright-controller-manager",
		"PodDisruptionBudget/nodewright-controller-manager-pdb", "ClusterRole/nodewright-manager-role",
		"ClusterRole/nodewright-metrics-reader", "Service/nodewright-webhook-service",
		"Service/nodewright-controller-manager-metrics-service", "LimitRange/nodewright-default-limits",
	} {
		if !slices.Contains(kinds, want) {
			t.Errorf("NodeWright's name %s not among %v", want, kinds)
		}
	}
	// createSkyhookViewerRole and createSkyhookEditorRole are false there.
	for _, kind := range kinds {
		if strings.HasSuffix(kind, "-viewer-role") || strings.HasSuffix(kind, "-editor-role") {
			t.Errorf("%s made although the file turns the user roles off", kind)
		}
	}

	// fullnameOverride: skyhook-operator keeps the names NodeWright had
	// before v0.18, whatever the release is called.
	values["fullnameOverride"] = "skyhook-operator"
	kinds = render(t, rel, values).Kinds()
	for _, want := range []string{
		"Deployment/skyhook-operator-controller-manager", "ClusterRole/skyhook-operator-manager-role",
		"ClusterRole/skyhook-operator-metrics-reader", "Service/skyhook-operator-webhook-service",
		"Service/skyhook-operator-controller-manager-metrics-service",
	} {
		if !slices.Contains(kinds, want) {
			t.Errorf("with fullnameOverride skyhook-operator: %s not among %v", want, kinds)
		}
	}
	delete(values, "fullnameOverride")

	// The webhook configurations carry NodeWright's selecting label both
	// ways they are made: by the chart (cert-manager) and by the operator.
	values["webhook"].(map[string]any)["certManager"] = map[string]any{"enabled": true}
	withCertManager := render(t, rel, values)
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		var object struct {
			Metadata struct{ Labels map[string]string }
		}
		if err := yaml.Unmarshal([]byte(manifest(t, withCertManager, kind)), &object); err != nil {
			t.Fatal(err)
		}
		if object.Metadata.Labels[config.WebhookConfigLabel] != "true" {
			t.Errorf("the chart's %s lacks %s: %v", kind, config.WebhookConfigLabel, object.Metadata.Labels)
		}
	}
	mutating, validating, err := config.Webhooks(func(string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{}
	})
	if err != nil {
		t.Fatal(err)
	}
	if mutating.Labels[config.WebhookConfigLabel] != "true" || validating.Labels[config.WebhookConfigLabel] != "true" {
		t.Errorf("the operator's webhook configurations lack %s: %v, %v", config.WebhookConfigLabel, mutating.Labels, validating.Labels)
	}
}

// The chart's own default passes no --runtime-required-taint, so each kind
// keeps its own taint (skyhook.nvidia.com for Skyhooks, nodewright.nvidia.com
// for NodeWrights); a taint the admin sets is passed as given.
func TestRuntimeRequiredTaintOnlyWhenSet(t *testing.T) {
	args := deployment(t, render(t, helm.Default, nil)).Spec.Template.Spec.Containers[0].Args
	for _, a := range args {
		if strings.HasPrefix(a, "--runtime-required-taint") {
			t.Errorf("default values pass %s, which would give both kinds one taint", a)
		}
	}
	set := map[string]any{"controllerManager": map[string]any{"manager": map[string]any{"env": map[string]any{
		"runtimeRequiredTaint": "example.com/new=pending:NoSchedule"}}}}
	args = deployment(t, render(t, helm.Default, set)).Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--runtime-required-taint=example.com/new=pending:NoSchedule") {
		t.Errorf("a set taint is not passed: %v", args)
	}
}

// NodeWright v0.20 spreads the operator's replicas over nodes where it
// can: a preferred anti-affinity on the hostname against its own pods, so
// a node going down does not take the leader and its standby together,
// and one node still runs both. controllerManager.affinity, when set,
// replaces the whole affinity.
func TestReplicasPreferDifferentNodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rel    helm.Release
		values map[string]any
	}{
		{"defaults", helm.Default, nil},
		{"NodeWright v0.20 values", helm.Release{Name: "nodewright", Namespace: "nodewright"}, nodewrightV020Values(t)},
	} {
		dep := deployment(t, render(t, tc.rel, tc.values))
		anti := dep.Spec.Template.Spec.Affinity.PodAntiAffinity
		if anti == nil || len(anti.RequiredDuringSchedulingIgnoredDuringExecution) != 0 || len(anti.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
			t.Errorf("%s: pod anti-affinity %+v, want one preferred term and none required", tc.name, anti)
			continue
		}
		term := anti.PreferredDuringSchedulingIgnoredDuringExecution[0]
		selector, err := metav1.LabelSelectorAsSelector(term.PodAffinityTerm.LabelSelector)
		if err != nil || term.Weight != 100 || term.PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" ||
			!selector.Matches(labels.Set(dep.Spec.Template.Labels)) || !selector.Matches(labels.Set(dep.Spec.Selector.MatchLabels)) {
			t.Errorf("%s: term %+v (selector %v, %v) does not keep the Deployment's own pods apart by hostname with weight 100",
				tc.name, term, selector, err)
		}
	}
	own := map[string]any{"controllerManager": map[string]any{"affinity": map[string]any{"podAffinity": map[string]any{}}}}
	if a := deployment(t, render(t, helm.Default, own)).Spec.Template.Spec.Affinity; a.PodAntiAffinity != nil || a.NodeAffinity != nil {
		t.Errorf("controllerManager.affinity does not replace the built one: %+v", a)
	}
}

func envValue(vars []corev1.EnvVar, name string) (string, bool) {
	for _, v := range vars {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// service is the rendered Service of that name.
func service(t *testing.T, r *helm.Rendered, name string) *corev1.Service {
	t.Helper()
	for _, m := range r.Manifests {
		if m.Head.Kind == "Service" && m.Head.Metadata.Name == name {
			svc := &corev1.Service{}
			if err := yaml.UnmarshalStrict([]byte(m.Content), svc); err != nil {
				t.Fatal(err)
			}
			return svc
		}
	}
	t.Fatalf("no Service %s among %v", name, r.Kinds())
	return nil
}

// hookJob is the rendered hook Job of that name.
func hookJob(t *testing.T, r *helm.Rendered, name string) *batchv1.Job {
	t.Helper()
	var names []string
	for _, h := range r.Hooks {
		names = append(names, h.Kind+"/"+h.Name)
		if h.Kind == "Job" && h.Name == name {
			job := &batchv1.Job{}
			if err := yaml.UnmarshalStrict([]byte(h.Manifest), job); err != nil {
				t.Fatal(err)
			}
			return job
		}
	}
	t.Fatalf("no hook Job %s among %v", name, names)
	return nil
}

// chartAppVersion is the embedded chart's appVersion, the tag of its images.
func chartAppVersion(t *testing.T) string {
	t.Helper()
	ch, err := helm.Load()
	if err != nil {
		t.Fatal(err)
	}
	return ch.Metadata.AppVersion
}

// A mirror of NodeWright's images under another name, and this chart's own
// images, are used as given, and the notes say nothing of a replacement.
func TestOnlyNodeWrightsPublishedImagesAreReplaced(t *testing.T) {
	values := map[string]any{"controllerManager": map[string]any{"manager": map[string]any{
		"image": map[string]any{"repository": "registry.example.com/nvidia/nodewright/operator", "tag": "v0.20.0"},
		"agent": map[string]any{"repository": "ghcr.io/nvidia/skyhook/agentless", "tag": "6.2.0"}}}}
	rendered := render(t, helm.Release{Name: "skyhook", Namespace: "skyhook"}, values)
	manager := deployment(t, rendered).Spec.Template.Spec.Containers[0]
	if manager.Image != "registry.example.com/nvidia/nodewright/operator:v0.20.0" ||
		!slices.Contains(manager.Args, "--agent-image=ghcr.io/nvidia/skyhook/agentless:6.2.0") || strings.Contains(rendered.Notes, "names NodeWright's") {
		t.Errorf("image %s, args %v, notes:\n%s", manager.Image, manager.Args, rendered.Notes)
	}
}
