package monitoring

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/config/helm"
)

func rendered(t *testing.T, values map[string]any) *helm.Rendered {
	t.Helper()
	ch, err := helm.Load()
	if err != nil {
		t.Fatal(err)
	}
	r, err := helm.Render(ch, helm.Default, values)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The chart's ServiceMonitor becomes one job: the metrics port of the
// Services with its selector's labels, over HTTPS with the token file, its
// targets labelled job=<Service>; the configuration adds the same job
// without the token, labelled apart.
func TestScrapeJobsFollowTheServiceMonitor(t *testing.T) {
	jobs, err := ScrapeJobs(rendered(t, map[string]any{"serviceMonitor": map[string]any{"enabled": true}}), "5s")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(jobs))
	}
	job, _ := yaml.Marshal(jobs[0])
	for _, want := range []string{"scheme: https", "credentials_file: /var/run/secrets/kubernetes.io/serviceaccount/token",
		"insecure_skip_verify: true", "scrape_interval: 5s", "role: endpointslice", "__meta_kubernetes_service_label_control_plane",
		"__meta_kubernetes_service_label_app_kubernetes_io_component", "__meta_kubernetes_endpointslice_port_name", "target_label: job"} {
		if !strings.Contains(string(job), want) {
			t.Errorf("the job lacks %q:\n%s", want, job)
		}
	}
	config, err := Config(Options{Jobs: jobs, WithoutTokenJob: true, Interval: "5s"})
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		ScrapeConfigs []map[string]any `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(config, &parsed); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range parsed.ScrapeConfigs {
		names = append(names, j["job_name"].(string))
		if j["job_name"] == WithoutTokenJob && j["authorization"] != nil {
			t.Errorf("the job without a token has one: %v", j["authorization"])
		}
	}
	if !slices.Equal(names, []string{"serviceMonitor/skyhook-system/skyhook-operator-controller-manager/0", WithoutTokenJob}) {
		t.Errorf("jobs %v", names)
	}
	if _, ok := jobs[0]["authorization"]; !ok {
		t.Error("Config changed the job it was given")
	}
	if _, err := Config(Options{}); err == nil {
		t.Error("a configuration with no job was made")
	}
}

// The PrometheusRule's groups are the rule file; a chart without one is an
// error that names the kind.
func TestRuleFileIsThePrometheusRulesSpec(t *testing.T) {
	rules, err := RuleFile(rendered(t, map[string]any{"prometheusRule": map[string]any{"enabled": true}}))
	if err != nil {
		t.Fatal(err)
	}
	alerts, err := AlertNames(rules)
	if err != nil || !slices.Contains(alerts, "SkyhookOperatorDown") || len(alerts) != 4 {
		t.Errorf("alerts %v (%v), want the chart's 4", alerts, err)
	}
	if _, err := RuleFile(rendered(t, nil)); err == nil || !strings.Contains(err.Error(), "PrometheusRule") {
		t.Errorf("a chart without a PrometheusRule: %v", err)
	}
}
