package helm_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/monitoring"
	"github.com/skyhook-go/skyhook/config/helm"
)

// The chart's alert rules pass `promtool check rules` and the unit tests
// of testdata/alerts/alerts_test.yaml (promtool test rules, Prometheus
// built from the module proxy), which test every alert of the chart both
// firing and not firing.
func TestAlertRulesPassPromtool(t *testing.T) {
	prom, err := binaries.EnsurePrometheus(context.Background(), binaries.Options{Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := monitoring.RuleFile(render(t, helm.Default, map[string]any{"prometheusRule": map[string]any{"enabled": true}}))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts", "alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"rules.yaml": rules, "alerts_test.yaml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command(prom.Promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s\nrules.yaml:\n%s", strings.Join(args, " "), err, out, rules)
		}
	}

	alerts, err := monitoring.AlertNames(rules)
	if err != nil {
		t.Fatal(err)
	}
	firing, quiet := testedAlerts(t, tests)
	for _, alert := range alerts {
		if !firing[alert] || !quiet[alert] {
			t.Errorf("alert %s: tested firing %v, not firing %v; want both", alert, firing[alert], quiet[alert])
		}
	}
	if len(alerts) < 4 {
		t.Errorf("the chart has %d alerts (%v), want the 4 docs/operations.md lists", len(alerts), alerts)
	}
}

// testedAlerts says which alerts the promtool test file expects to fire at
// some time, and which it expects quiet at some time.
func testedAlerts(t *testing.T, file []byte) (firing, quiet map[string]bool) {
	t.Helper()
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(file, &tests); err != nil {
		t.Fatal(err)
	}
	firing, quiet = map[string]bool{}, map[string]bool{}
	for _, test := range tests.Tests {
		for _, a := range test.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				firing[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	return firing, quiet
}
