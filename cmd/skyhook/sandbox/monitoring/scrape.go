package monitoring

import (
	"fmt"
	"regexp"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/config/helm"
)

// serviceMonitor is the part of a monitoring.coreos.com/v1 ServiceMonitor
// the chart sets.
type serviceMonitor struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port            string `json:"port"`
			Path            string `json:"path"`
			Interval        string `json:"interval"`
			Scheme          string `json:"scheme"`
			BearerTokenFile string `json:"bearerTokenFile"`
			TLSConfig       struct {
				InsecureSkipVerify bool `json:"insecureSkipVerify"`
			} `json:"tlsConfig"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// ScrapeJobs are the scrape jobs the Prometheus Operator makes of the
// rendered chart's ServiceMonitor, one per endpoint, as facts of its
// documented behaviour: the Service's endpoints (EndpointSlices) in the
// ServiceMonitor's namespace whose Service carries the selector's labels,
// on the named port; `job` is the Service's name, `namespace`, `service`,
// `pod` and `endpoint` are set from the target. Without a Prometheus
// Operator here, the test's Prometheus is given these jobs directly.
// interval, when set, overrides the ServiceMonitor's (a test does not wait
// 30 seconds between scrapes).
func ScrapeJobs(rendered *helm.Rendered, interval string) ([]map[string]any, error) {
	obj, err := manifest(rendered, "ServiceMonitor")
	if err != nil {
		return nil, err
	}
	data, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var sm serviceMonitor
	if err := yaml.Unmarshal(data, &sm); err != nil {
		return nil, err
	}
	if len(sm.Spec.Endpoints) == 0 {
		return nil, fmt.Errorf("the ServiceMonitor has no endpoints")
	}
	var jobs []map[string]any
	for i, ep := range sm.Spec.Endpoints {
		job := map[string]any{
			"job_name":              fmt.Sprintf("serviceMonitor/%s/%s/%d", sm.Metadata.Namespace, sm.Metadata.Name, i),
			"scheme":                orDefault(ep.Scheme, "http"),
			"metrics_path":          orDefault(ep.Path, "/metrics"),
			"scrape_interval":       orDefault(interval, orDefault(ep.Interval, "30s")),
			"kubernetes_sd_configs": []any{map[string]any{"role": "endpointslice", "namespaces": map[string]any{"names": []string{sm.Metadata.Namespace}}}},
			"relabel_configs":       relabelling(sm.Spec.Selector.MatchLabels, ep.Port),
		}
		if ep.BearerTokenFile != "" {
			job["authorization"] = map[string]any{"credentials_file": ep.BearerTokenFile}
		}
		if ep.TLSConfig.InsecureSkipVerify {
			job["tls_config"] = map[string]any{"insecure_skip_verify": true}
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}

// invalidLabelChars are what Prometheus's Kubernetes discovery turns into
// _ when it names a Kubernetes label in its meta labels.
var invalidLabelChars = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// relabelling keeps the targets of the selected Services' port and labels
// them as the Prometheus Operator does.
func relabelling(matchLabels map[string]string, port string) []any {
	var rules []any
	keys := make([]string, 0, len(matchLabels))
	for k := range matchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rules = append(rules, map[string]any{
			"action": "keep", "regex": regexp.QuoteMeta(matchLabels[k]),
			"source_labels": []string{"__meta_kubernetes_service_label_" + invalidLabelChars.ReplaceAllString(k, "_")},
		})
	}
	rules = append(rules,
		map[string]any{"action": "keep", "regex": regexp.QuoteMeta(port), "source_labels": []string{"__meta_kubernetes_endpointslice_port_name"}},
		map[string]any{"source_labels": []string{"__meta_kubernetes_namespace"}, "target_label": "namespace"},
		map[string]any{"source_labels": []string{"__meta_kubernetes_service_name"}, "target_label": "service"},
		map[string]any{"source_labels": []string{"__meta_kubernetes_pod_name"}, "target_label": "pod"},
		map[string]any{"source_labels": []string{"__meta_kubernetes_service_name"}, "target_label": "job"},
		map[string]any{"target_label": "endpoint", "replacement": port},
	)
	return rules
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
