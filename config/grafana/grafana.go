// Package grafana is the operator's Grafana dashboard, written as code with
// Grafana's foundation SDK and generated to skyhook-dashboard.json by `make
// generate` (the Helm chart ships that file as a dashboard ConfigMap).
// Its queries name only metrics the operator exports: test/e2e checks every
// one against the metrics of a running operator.
package grafana

import (
	"encoding/json"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// UID is the dashboard's fixed UID, so links and provisioning survive
// regeneration.
const UID = "skyhook-operator"

// JSON is the dashboard as Grafana imports it.
func JSON() ([]byte, error) {
	d, err := Dashboard().Build()
	if err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// Dashboard builds the dashboard: what a fleet admin looks at first (nodes
// by status, what is failing), then the rollout, the stages, GitOps and the
// operator itself.
func Dashboard() *dashboard.DashboardBuilder {
	b := dashboard.NewDashboardBuilder("Skyhook").
		Uid(UID).
		Description("Rollouts of host packages by the Skyhook operator: nodes, stages, PackageSets and the operator.").
		Tags([]string{"skyhook", "kubernetes"}).
		Refresh("30s").
		Time("now-6h", "now").
		Timezone(common.TimeZoneBrowser).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus")).
		WithVariable(dashboard.NewQueryVariableBuilder("skyhook").Label("Skyhook").
			Datasource(datasource()).
			Query(dashboard.StringOrMap{String: cog.ToPtr("label_values(skyhook_nodes, skyhook)")}).
			Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
			Multi(true).IncludeAll(true).AllValue(".*"))
	for _, row := range rows() {
		b = b.WithRow(dashboard.NewRowBuilder(row.title))
		for _, p := range row.panels {
			b = b.WithPanel(p)
		}
	}
	return b
}

type row struct {
	title  string
	panels []cog.Builder[dashboard.Panel]
}

func rows() []row {
	return []row{
		{"Fleet", []cog.Builder[dashboard.Panel]{
			number("Nodes complete", `sum(skyhook_nodes{skyhook=~"$skyhook", status="complete"})`),
			number("Nodes in progress", `sum(skyhook_nodes{skyhook=~"$skyhook", status="in_progress"})`),
			number("Nodes waiting", `sum(skyhook_nodes{skyhook=~"$skyhook", status="waiting"})`),
			number("Nodes blocked by taints", `sum(skyhook_nodes{skyhook=~"$skyhook", status="blocked"})`),
			number("Skyhooks erroring", `count(skyhook_status{skyhook_name=~"$skyhook", status="erroring"} == 1) or vector(0)`),
			number("Compartments halted", `sum(skyhook_compartment_halted{skyhook=~"$skyhook"}) or vector(0)`),
		}},
		{"Rollout", []cog.Builder[dashboard.Panel]{
			graph("Nodes by status", "", `sum by (skyhook, status) (skyhook_nodes{skyhook=~"$skyhook"})`, "{{skyhook}} {{status}}"),
			graph("In progress against the budget", "", `sum by (skyhook) (skyhook_nodes{skyhook=~"$skyhook", status="in_progress"})`, "{{skyhook}} in progress",
				`skyhook_rollout_budget{skyhook=~"$skyhook"}`, "{{skyhook}} budget"),
			graph("Compartments: complete of all", "", `skyhook_compartment_nodes{skyhook=~"$skyhook"}`, "{{skyhook}}/{{compartment}} {{status}}",
				`skyhook_compartment_batch_size{skyhook=~"$skyhook"}`, "{{skyhook}}/{{compartment}} batch size"),
			graph("Package records by state", "", `sum by (skyhook, package, version, state) (skyhook_packages{skyhook=~"$skyhook"})`, "{{skyhook}} {{package}} {{version}} {{state}}"),
		}},
		{"Stages", []cog.Builder[dashboard.Panel]{
			graph("Stage duration p50 / p95", "s",
				`histogram_quantile(0.5, sum by (le, package, stage) (rate(skyhook_stage_duration_seconds_bucket{skyhook=~"$skyhook", result="succeeded"}[$__rate_interval])))`, "p50 {{package}} {{stage}}",
				`histogram_quantile(0.95, sum by (le, package, stage) (rate(skyhook_stage_duration_seconds_bucket{skyhook=~"$skyhook", result="succeeded"}[$__rate_interval])))`, "p95 {{package}} {{stage}}"),
			graph("Stages ended per minute", "", `sum by (stage, result) (rate(skyhook_stage_duration_seconds_count{skyhook=~"$skyhook"}[$__rate_interval])) * 60`, "{{stage}} {{result}}"),
			graph("Stage failures (last hour)", "", `sum by (skyhook, package, stage) (increase(skyhook_stage_failures_total{skyhook=~"$skyhook"}[1h]))`, "{{skyhook}} {{package}} {{stage}}"),
		}},
		{"GitOps", []cog.Builder[dashboard.Panel]{
			number("PackageSets not Ready", `sum(skyhook_packageset_condition{type="Ready", status!="True"}) or vector(0)`),
			graph("Objects applied by PackageSet", "", `skyhook_packageset_applied_objects`, "{{namespace}}/{{name}}"),
			graph("PackageSet failures (last hour)", "", `sum by (namespace, name, reason) (increase(skyhook_packageset_failures_total[1h]))`, "{{namespace}}/{{name}} {{reason}}"),
		}},
		{"Operator", []cog.Builder[dashboard.Panel]{
			graph("Reconciles per second", "", `sum by (controller, result) (rate(controller_runtime_reconcile_total[$__rate_interval]))`, "{{controller}} {{result}}"),
			graph("Reconcile time p99", "s", `histogram_quantile(0.99, sum by (le, controller) (rate(controller_runtime_reconcile_time_seconds_bucket[$__rate_interval])))`, "{{controller}}"),
			graph("Work queue depth", "", `sum by (name) (workqueue_depth)`, "{{name}}"),
			graph("Operator memory", "bytes", `process_resident_memory_bytes{job=~".*skyhook.*"}`, "{{pod}}"),
		}},
	}
}

func datasource() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}
}

// number is a stat panel of one query.
func number(title, expr string) cog.Builder[dashboard.Panel] {
	return stat.NewPanelBuilder().Title(title).Datasource(datasource()).Height(4).Span(4).
		GraphMode(common.BigValueGraphModeArea).
		WithTarget(prometheus.NewDataqueryBuilder().Expr(expr))
}

// graph is a time series panel of expr/legend pairs.
func graph(title, unit string, exprAndLegends ...string) cog.Builder[dashboard.Panel] {
	p := timeseries.NewPanelBuilder().Title(title).Datasource(datasource()).Height(8).Span(12)
	if unit != "" {
		p = p.Unit(unit)
	}
	for i := 0; i+1 < len(exprAndLegends); i += 2 {
		p = p.WithTarget(prometheus.NewDataqueryBuilder().Expr(exprAndLegends[i]).LegendFormat(exprAndLegends[i+1]))
	}
	return p
}

// Queries lists every query of the dashboard's panels and variables, for
// the test that holds them against the exported metrics.
func Queries() ([]string, error) {
	d, err := Dashboard().Build()
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range doc.Panels {
		for _, t := range p.Targets {
			out = append(out, t.Expr)
		}
	}
	for _, v := range doc.Templating.List {
		if q, ok := v.Query.(string); ok && v.Type == "query" {
			out = append(out, q)
		}
	}
	return out, nil
}
