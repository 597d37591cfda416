package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/gitserver"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config/grafana"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// dashboardFleet is a Skyhook under a DeploymentPolicy and a failing one,
// so that every family the dashboard reads has series: compartments,
// stages, failures, packages.
var dashboardFleet = fmt.Sprintf(`apiVersion: skyhook.nvidia.com/v1alpha1
kind: DeploymentPolicy
metadata: {name: e2e-dashboard}
spec:
  default: {budget: {count: 1}}
  compartments:
  - name: first
    selector: {matchLabels: {pool: e2e}}
    budget: {count: 2}
    strategy: {fixed: {initialBatch: 2}}
---
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: e2e-dashboard}
spec:
  nodeSelectors: {matchLabels: {pool: e2e}}
  deploymentPolicy: e2e-dashboard
  packages:
    tuning:
      version: "1.0.0"
      image: ghcr.io/x/tuning
      env: [{name: %[1]s, value: 200ms}]
---
# After it on the same nodes (a higher priority number), a package whose
# step fails: stage failures and an erroring Skyhook.
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: e2e-dashboard-failing}
spec:
  nodeSelectors: {matchLabels: {pool: e2e}}
  priority: 300
  interruptionBudget: {count: 1}
  packages:
    broken:
      version: "1.0.0"
      image: ghcr.io/x/broken
      env: [{name: %[1]s, value: 200ms}, {name: %[2]s, value: "3"}]
`, simnode.DurationEnv, simnode.ExitCodeEnv)

// Every query of the operator's Grafana dashboard (config/grafana) selects
// metrics this operator exports, with the labels it matches on, once a
// PackageSet-fed rollout under a DeploymentPolicy has run and another has
// failed.
func TestDashboardQueriesFindTheirMetrics(t *testing.T) {
	ctx := context.Background()
	c := k8sClient(t)
	namespace(t, "dashboard")
	url, err := git.Create("dashboard")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitserver.Push(t.TempDir(), url, map[string]string{"sets/fleet.yaml": dashboardFleet}, "fleet"); err != nil {
		t.Fatal(err)
	}
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: "dashboard"},
		Spec: sourcev1.GitRepositorySpec{URL: url, Interval: metav1.Duration{Duration: time.Minute},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
	}
	if err := c.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), repo) })
	packageSet(t, "dashboard", "fleet", skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "dashboard"})
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := env.Kubectl("get", "skyhook/e2e-dashboard", "packageset/fleet", "-n", "dashboard", "-o", "yaml")
			t.Log(out)
		}
	})
	testenv.Eventually(t, "one rollout to complete and the other to fail", 2*time.Minute, func() bool {
		done, failing := &skyhookv1.Skyhook{}, &skyhookv1.Skyhook{}
		return c.Get(ctx, client.ObjectKey{Name: "e2e-dashboard"}, done) == nil && done.Status.Status == skyhookv1.StatusComplete &&
			c.Get(ctx, client.ObjectKey{Name: "e2e-dashboard-failing"}, failing) == nil && failing.Status.Status == skyhookv1.StatusErroring
	})

	queries, err := grafana.Queries()
	if err != nil {
		t.Fatal(err)
	}
	exported := gatherLabels(t)
	selectors := 0
	for _, query := range queries {
		if len(metricSelectors(query)) == 0 {
			t.Errorf("the dashboard's query selects no metric of the operator's: %s", query)
		}
		for _, sel := range metricSelectors(query) {
			selectors++
			labels, ok := exported[sel.family]
			if !ok {
				t.Errorf("the dashboard queries %s, which has no series here: %s", sel.metric, query)
				continue
			}
			for _, l := range sel.labels {
				if !labels[l] {
					t.Errorf("the dashboard matches %s on label %s, which it does not have: %s", sel.metric, l, query)
				}
			}
		}
	}
	if len(queries) < 20 {
		t.Errorf("read %d queries with %d metric selectors; the dashboard has 24", len(queries), selectors)
	}
}

// gatherLabels is each exported family with the label names its series
// carry.
func gatherLabels(t *testing.T) map[string]map[string]bool {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for _, f := range families {
		names := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				names[l.GetName()] = true
			}
		}
		if f.GetType() == dto.MetricType_HISTOGRAM {
			names["le"] = true
		}
		out[f.GetName()] = names
	}
	return out
}

type selector struct {
	metric, family string
	labels         []string
}

var (
	selectorPattern = regexp.MustCompile(`\b((?:skyhook|controller_runtime|workqueue|process)_[a-z0-9_]+)\s*(\{([^}]*)\})?`)
	matcherPattern  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)`)
	// scrapeLabels are added by Prometheus when it scrapes, not exported.
	scrapeLabels = map[string]bool{"job": true, "instance": true, "pod": true, "service": true, "endpoint": true, "container": true}
)

// metricSelectors finds the metrics a PromQL query selects and the labels
// it matches on; a histogram's _bucket, _count and _sum series belong to
// its family.
func metricSelectors(query string) []selector {
	var out []selector
	for _, m := range selectorPattern.FindAllStringSubmatch(query, -1) {
		if m[1] == "skyhook_name" {
			continue // the label, not a metric
		}
		s := selector{metric: m[1], family: m[1]}
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if strings.HasSuffix(m[1], suffix) && m[1] != "skyhook_stage_failures_total" {
				s.family = strings.TrimSuffix(m[1], suffix)
			}
		}
		for _, l := range matcherPattern.FindAllStringSubmatch(m[3], -1) {
			if !scrapeLabels[l[1]] {
				s.labels = append(s.labels, l[1])
			}
		}
		out = append(out, s)
	}
	return out
}
