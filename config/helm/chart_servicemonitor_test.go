package helm_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/config/helm"
)

// The ServiceMonitor selects the metrics Service, and only it (the
// Prometheus Operator scrapes the endpoints of the Services it selects):
// before 2026-11-27 its selector asked for control-plane, which the metrics
// Service did not carry, and nothing was scraped. The Service carries
// NodeWright's labels, which ServiceMonitors written for it select by.
func TestServiceMonitorSelectsTheMetricsService(t *testing.T) {
	rendered := render(t, helm.Default, map[string]any{"serviceMonitor": map[string]any{"enabled": true}})
	var sm struct {
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(manifest(t, rendered, "ServiceMonitor")), &sm); err != nil {
		t.Fatal(err)
	}
	selector := labels.SelectorFromSet(sm.Spec.Selector.MatchLabels)
	var selected []string
	for _, m := range rendered.Manifests {
		if m.Head.Kind != "Service" {
			continue
		}
		var svc corev1.Service
		if err := yaml.Unmarshal([]byte(m.Content), &svc); err != nil {
			t.Fatal(err)
		}
		if selector.Matches(labels.Set(svc.Labels)) {
			selected = append(selected, svc.Name)
		}
		if svc.Name != "skyhook-operator-controller-manager-metrics-service" {
			continue
		}
		for k, v := range map[string]string{
			"control-plane": "controller-manager", "app.kubernetes.io/component": "metrics",
			"app.kubernetes.io/created-by": "skyhook-operator", "app.kubernetes.io/part-of": "skyhook-operator",
		} {
			if svc.Labels[k] != v {
				t.Errorf("the metrics Service's label %s is %q, want NodeWright's %q", k, svc.Labels[k], v)
			}
		}
	}
	if len(selected) != 1 || selected[0] != "skyhook-operator-controller-manager-metrics-service" {
		t.Errorf("the ServiceMonitor (selector %s) selects the Services %v, want the metrics Service alone", selector, selected)
	}
}
