package testenv

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Series are the series of a metric of the operator running in this test
// process (controller-runtime's registry) whose labels include labels.
func Series(t testing.TB, name string, labels map[string]string) []*dto.Metric {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				out = append(out, m)
			}
		}
	}
	return out
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// MetricSum adds up the matching series: a gauge's or counter's value, a
// histogram's count of samples; -1 when no series matches.
func MetricSum(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	series := Series(t, name, labels)
	if len(series) == 0 {
		return -1
	}
	total := 0.0
	for _, m := range series {
		total += m.GetGauge().GetValue() + m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
	}
	return total
}
