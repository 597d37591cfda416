package installed

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/monitoring"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config/grafana"
	"github.com/skyhook-go/skyhook/config/helm"
	"github.com/skyhook-go/skyhook/test/promtest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// The operator installed with the chart, its metrics reader bound to
// Prometheus's ServiceAccount (metrics.addServiceAccountBinding), is
// scraped by a real Prometheus running as a pod, through the metrics
// Service's endpoints over HTTPS with that account's token, as the chart's
// ServiceMonitor says; without the token it is refused. Once rollouts of
// both API groups have run (one under a DeploymentPolicy with
// compartments, one failing), every query of the shipped Grafana
// dashboard and of NodeWright v0.20's returns series, as does each metric
// selector in them; the chart's alert rules load and evaluate.
func TestPrometheusScrapesTheOperatorForItsDashboards(t *testing.T) {
	needRealNodes(t)
	b := buildImages(t, "test-1")
	// Made before the install, so that it is removed after the uninstall,
	// whose steps write in it.
	hostDir := t.TempDir()
	vals := values(b)
	vals["metrics"] = map[string]any{"addServiceAccountBinding": true}
	helmInstall(t, vals)
	t.Cleanup(func() { helmUninstall(t) })

	// What the Prometheus Operator would make of the chart's ServiceMonitor
	// and PrometheusRule (not installed: no Prometheus Operator here).
	withMonitoring := maps.Clone(vals)
	withMonitoring["serviceMonitor"] = map[string]any{"enabled": true}
	withMonitoring["prometheusRule"] = map[string]any{"enabled": true}
	ch := operatorChart(t)
	rendered, err := helm.Render(ch, helm.Release{Name: releaseName, Namespace: namespace}, withMonitoring)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := monitoring.ScrapeJobs(rendered, scrapeInterval)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := monitoring.RuleFile(rendered)
	if err != nil {
		t.Fatal(err)
	}
	prom := startPrometheus(t, jobs, rules)
	ctx := context.Background()
	metricsService := releaseName + "-controller-manager-metrics-service"

	scraped := t.Run("scraped over HTTPS with a ServiceAccount token, refused without", func(t *testing.T) {
		deadline := time.Now().Add(time.Minute)
		for {
			up, refused, summary := scrapeHealth(ctx, prom, metricsService)
			if up == 2 && refused == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after a minute %d operator targets up with the token (want 2) and %d refused without (want 2):\n%s\nPrometheus's log:\n%s",
					up, refused, summary, prometheusLog())
			}
			time.Sleep(time.Second)
		}
	})

	if !scraped {
		return // the dashboards would only say the same
	}
	rollOutForDashboards(t, hostDir)

	t.Run("every query of the shipped dashboard returns series", func(t *testing.T) {
		queries, err := grafana.Queries()
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, q := range queries {
			if strings.Contains(q, "skyhook_packageset_") {
				continue // no Flux source here; test/e2e checks these
			}
			checkQueryReturnsSeries(t, prom, q, true)
			checked++
		}
		t.Logf("%d of the dashboard's %d queries checked (the PackageSet panels' %d need a Flux source)", checked, len(queries), len(queries)-checked)
		if checked < 20 {
			t.Errorf("checked %d queries, want the dashboard's 21 that are not about PackageSets", checked)
		}
	})

	t.Run("every query of NodeWright v0.20's dashboard returns series", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join("..", "..", "reconcile", "testdata", "nodewright-v0.20-dashboard-queries.txt"))
		if err != nil {
			t.Fatal(err)
		}
		queries := strings.Split(string(data), "\n---\n")[1:]
		for _, q := range queries {
			// Its `or vector(0)`s are for stages and states NodeWright
			// exports only once a node is in them: the metrics, not each
			// label value, must have series.
			checkQueryReturnsSeries(t, prom, q, false)
		}
		if len(queries) != 42 {
			t.Errorf("read %d queries, want the dashboard's 42", len(queries))
		}
	})

	t.Run("the chart's alert rules load, evaluate, and the operator is not down", func(t *testing.T) {
		result, err := prom.Rules(ctx)
		if err != nil {
			t.Fatal(err)
		}
		alerts := 0
		for _, g := range result.Groups {
			for _, r := range g.Rules {
				if a, ok := r.(promv1.AlertingRule); ok {
					alerts++
					if a.Health != promv1.RuleHealthGood || a.LastError != "" {
						t.Errorf("alert %s: health %s, %s", a.Name, a.Health, a.LastError)
					}
					if a.Name == "SkyhookOperatorDown" && a.State != "inactive" {
						t.Errorf("SkyhookOperatorDown is %s while both operator pods are scraped", a.State)
					}
				}
			}
		}
		if alerts != 4 {
			t.Errorf("Prometheus evaluates %d alerts, want the chart's 4", alerts)
		}
	})
}

// scrapeHealth counts the operator's targets scraped up with the token and
// refused (401 or 403) without, and sums up every target for a message.
func scrapeHealth(ctx context.Context, prom *promtest.Client, metricsService string) (up, refused int, summary string) {
	targets, err := prom.Targets(ctx)
	if err != nil {
		return 0, 0, err.Error()
	}
	var b strings.Builder
	for _, target := range targets.Active {
		job := string(target.Labels["job"])
		fmt.Fprintf(&b, "%s %s: %s %s\n", job, target.ScrapeURL, target.Health, target.LastError)
		switch {
		case job == metricsService && target.Health == promv1.HealthGood:
			up++
		case job == monitoring.WithoutTokenJob && target.Health == promv1.HealthBad &&
			(strings.Contains(target.LastError, "401") || strings.Contains(target.LastError, "403")):
			refused++
		}
	}
	for _, target := range targets.Dropped {
		// What the ServiceMonitor's relabelling keeps by.
		var keep []string
		for k, v := range target.DiscoveredLabels {
			if strings.Contains(k, "port_name") || strings.Contains(k, "service_label_app_kubernetes_io_component") || strings.HasSuffix(k, "service_name") {
				keep = append(keep, k+"="+v)
			}
		}
		fmt.Fprintf(&b, "dropped %s: %v\n", target.DiscoveredLabels["__address__"], keep)
	}
	return up, refused, b.String()
}

// checkQueryReturnsSeries fails the test unless the dashboard's query
// returns series now, and each metric it reads has series: with
// eachSelector, each of its selectors as written (an `or vector(0)` would
// hide a missing one).
func checkQueryReturnsSeries(t *testing.T, prom *promtest.Client, dashboardQuery string, eachSelector bool) {
	t.Helper()
	ctx := context.Background()
	query := promtest.Expand(dashboardQuery)
	n, err := prom.Series(ctx, query)
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	if n == 0 {
		t.Errorf("no series for the dashboard's query %s", dashboardQuery)
	}
	selectors, err := prom.Selectors(ctx, query)
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	if len(selectors) == 0 {
		t.Errorf("the dashboard's query reads no metric: %s", dashboardQuery)
	}
	for _, sel := range selectors {
		q := sel.Query
		if !eachSelector {
			q = sel.Metric
		}
		if n, err := prom.Series(ctx, q); err != nil || n == 0 {
			t.Errorf("no series for %s (%v), read by the dashboard's query %s", q, err, dashboardQuery)
		}
	}
}

// rollOutForDashboards runs what gives every panel series: a Skyhook over
// all nodes under a DeploymentPolicy with a compartment for the real nodes,
// which completes; a NodeWright on the simulated nodes, which completes;
// and a Skyhook whose stages fail on the simulated nodes, which errors.
func rollOutForDashboards(t *testing.T, hostDir string) {
	t.Helper()
	image := pushPackage(t)
	// NodeWright takes the digest apart from the repository.
	repository, digest, _ := strings.Cut(image, "@")
	manifest := fmt.Sprintf(`apiVersion: skyhook.nvidia.com/v1alpha1
kind: DeploymentPolicy
metadata: {name: observed}
spec:
  default: {budget: {count: 2}}
  compartments:
  - name: real
    selector: {matchLabels: {%[1]s: %[2]s}}
    budget: {count: 2}
    strategy: {fixed: {initialBatch: 2}}
---
apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata: {name: observed-nodewright}
spec:
  nodeSelectors: {matchLabels: {%[1]s: %[3]s}}
  interruptionBudget: {count: 2}
  packages:
    tuning: {version: 1.0.0, image: %[6]q, containerSHA: %[7]q}
---
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: observed-failing}
spec:
  nodeSelectors: {matchLabels: {%[1]s: %[3]s}}
  priority: 300
  interruptionBudget: {count: 2}
  packages:
    broken:
      version: 1.0.0
      image: %[4]q
      env: [{name: %[5]s, value: "3"}]
`, kubeletnode.Label, kubeletnode.LabelValue, simnode.LabelValue, image, simnode.ExitCodeEnv, repository, digest)
	if out, err := kubectlApply(t, manifest); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	sk := fleetSkyhook("observed", image, hostDir)
	sk.Spec.InterruptionBudget = skyhookv1.InterruptionBudget{}
	sk.Spec.DeploymentPolicy = "observed"
	t.Cleanup(func() { _ = os.RemoveAll(filepath.Join("/var/lib/skyhook", sk.Name)) })
	c := testenv.Client(t, env)
	ctx := context.Background()
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	waitComplete(t, sk.Name)
	testenv.Eventually(t, "the NodeWright complete and the failing Skyhook erroring", 3*time.Minute, func() bool {
		failing := &skyhookv1.Skyhook{}
		nw, err := env.Kubectl("get", "nodewright", "observed-nodewright", "-o", "jsonpath={.status.status}")
		return err == nil && nw == string(skyhookv1.StatusComplete) &&
			c.Get(ctx, client.ObjectKey{Name: "observed-failing"}, failing) == nil && failing.Status.Status == skyhookv1.StatusErroring
	})
	// A few scrapes and rule evaluations of the end state.
	time.Sleep(4 * time.Second)
}
