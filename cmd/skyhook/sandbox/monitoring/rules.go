// Package monitoring runs a real Prometheus in the cluster on the chart's
// own monitoring objects, where no Prometheus Operator is: the
// PrometheusRule as a rule file, the ServiceMonitor as the scrape job the
// Prometheus Operator makes of it, and Prometheus as a pod with a
// ServiceAccount of its own. The sandbox (--real-nodes) and test/installed
// run it.
package monitoring

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/config/helm"
)

// RuleFile is the rendered chart's PrometheusRule as a Prometheus rule
// file: the resource's spec is the file's content (groups of rules).
func RuleFile(rendered *helm.Rendered) ([]byte, error) {
	obj, err := manifest(rendered, "PrometheusRule")
	if err != nil {
		return nil, err
	}
	spec, ok := obj["spec"].(map[string]any)
	if !ok || spec["groups"] == nil {
		return nil, fmt.Errorf("the PrometheusRule has no spec.groups")
	}
	return yaml.Marshal(spec)
}

// AlertNames lists the alerts of a rule file, in order.
func AlertNames(ruleFile []byte) ([]string, error) {
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(ruleFile, &file); err != nil {
		return nil, err
	}
	var names []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				names = append(names, r.Alert)
			}
		}
	}
	return names, nil
}

// manifest is the one rendered manifest of the kind, decoded.
func manifest(rendered *helm.Rendered, kind string) (map[string]any, error) {
	var found map[string]any
	for _, m := range rendered.Manifests {
		if m.Head == nil || m.Head.Kind != kind {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("the chart rendered more than one %s", kind)
		}
		if err := yaml.Unmarshal([]byte(m.Content), &found); err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
	}
	if found == nil {
		return nil, fmt.Errorf("the chart rendered no %s (kinds: %v)", kind, rendered.Kinds())
	}
	return found, nil
}
