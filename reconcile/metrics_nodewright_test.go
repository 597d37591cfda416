package reconcile

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// NodeWright v0.20's two names of each gauge carry the same series, but
// for the label of the rollout's name; the old name's HELP is the new
// one's with its deprecation notice.
func TestNodeWrightGaugesPublishBothNames(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := newNodeWrightGauges(reg)
	g.replace(skyhookv1.NodeWrights.Named("gpu"), func(s nodeWrightSeries) {
		g.setStatus(s, skyhookv1.StatusInProgress)
		s.add(g.pkgState, 2, "driver", "1.0", "complete")
		s.add(g.pkgState, 1, "driver", "1.0", "complete") // tallies of two stages add up
	})
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"nodewright_status", map[string]string{"nodewright_name": "gpu", "status": "in_progress"}, 1},
		{"skyhook_status", map[string]string{"skyhook_name": "gpu", "status": "in_progress"}, 1},
		{"nodewright_status", map[string]string{"nodewright_name": "gpu", "status": "complete"}, 0},
		{"skyhook_status", map[string]string{"skyhook_name": "gpu", "status": "complete"}, 0},
		{"nodewright_package_state_count", map[string]string{"nodewright_name": "gpu", "package_name": "driver", "package_version": "1.0", "state": "complete"}, 3},
		{"skyhook_package_state_count", map[string]string{"skyhook_name": "gpu", "package_name": "driver", "package_version": "1.0", "state": "complete"}, 3},
	} {
		if got, ok := gaugeValue(t, reg, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	help := helpOf(t, reg)
	if want := help["nodewright_status"] + " (DEPRECATED: use nodewright_status with the nodewright_name label; removed in v0.21.0)"; help["skyhook_status"] != want {
		t.Errorf("skyhook_status HELP %q, want %q", help["skyhook_status"], want)
	}
}

// A Skyhook and a NodeWright of one name are one rollout: the one that does
// not lead forgetting its metrics (as it does on every reconcile) leaves the
// leader's series of that name; the leader going takes both halves.
func TestNodeWrightGaugesOfTwins(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := newNodeWrightGauges(reg)
	nw, sk := skyhookv1.NodeWrights.Named("twin"), skyhookv1.Skyhooks.Named("twin")
	current := map[string]string{"nodewright_name": "twin", "status": "complete"}
	legacy := map[string]string{"skyhook_name": "twin", "status": "complete"}

	// The Skyhook led; the NodeWright takes over with a partial update (a
	// disabled rollout's status): the Skyhook's package series go with it.
	g.replace(sk, func(s nodeWrightSeries) { s.set(g.pkgStage, 2, "driver", "1.0", "apply") })
	g.update(nw, func(s nodeWrightSeries) { g.setStatus(s, skyhookv1.StatusComplete) })
	if _, ok := gaugeValue(t, reg, "nodewright_package_stage_count", map[string]string{"nodewright_name": "twin"}); ok {
		t.Error("the Skyhook's package series outlived the NodeWright taking the name over")
	}
	g.forget(sk)
	for name, labels := range map[string]map[string]string{"nodewright_status": current, "skyhook_status": legacy} {
		if v, ok := gaugeValue(t, reg, name, labels); !ok || v != 1 {
			t.Errorf("after the superseded Skyhook forgot its metrics: %s%v = %v (found %v), want the NodeWright's 1", name, labels, v, ok)
		}
	}
	g.forget(nw)
	for name, labels := range map[string]map[string]string{"nodewright_status": current, "skyhook_status": legacy} {
		if _, ok := gaugeValue(t, reg, name, labels); ok {
			t.Errorf("%s%v outlived the NodeWright", name, labels)
		}
	}
}

// A pass replaces the rollout's series: a version gone leaves no series.
func TestNodeWrightGaugesReplaceDropsWhatIsGone(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := newNodeWrightGauges(reg)
	rollout := skyhookv1.NodeWrights.Named("upgrade")
	g.replace(rollout, func(s nodeWrightSeries) { s.set(g.pkgStage, 1, "driver", "1.0", "config") })
	g.replace(rollout, func(s nodeWrightSeries) { s.set(g.pkgStage, 1, "driver", "2.0", "apply") })
	for _, name := range []string{"nodewright_package_stage_count", "skyhook_package_stage_count"} {
		if _, ok := gaugeValue(t, reg, name, map[string]string{"package_version": "1.0"}); ok {
			t.Errorf("%s keeps version 1.0", name)
		}
		if _, ok := gaugeValue(t, reg, name, map[string]string{"package_version": "2.0"}); !ok {
			t.Errorf("%s has no series of version 2.0", name)
		}
	}
}

// PUBLISH_LEGACY_METRICS=false: the skyhook_* names leave the endpoint
// (not left with stale values) and are no longer written; nodewright_*
// stays.
func TestNodeWrightGaugesDropLegacy(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := newNodeWrightGauges(reg)
	rollout := skyhookv1.Skyhooks.Named("seeds")
	g.replace(rollout, func(s nodeWrightSeries) { s.set(g.target, 3) })
	g.dropLegacy()
	g.replace(rollout, func(s nodeWrightSeries) { s.set(g.target, 4) })
	help := helpOf(t, reg)
	for name := range help {
		if strings.HasPrefix(name, legacyPrefix) {
			t.Errorf("%s is still published", name)
		}
	}
	if v, ok := gaugeValue(t, reg, "nodewright_node_target_count", map[string]string{"nodewright_name": "seeds"}); !ok || v != 4 {
		t.Errorf("nodewright_node_target_count = %v (found %v), want 4", v, ok)
	}
	for _, tg := range g.all() {
		if n := testCount(tg.legacy); n != 0 {
			t.Errorf("a dropped legacy gauge holds %d series", n)
		}
	}
}

func gaugeValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabelValues(m, labels) {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

func hasLabelValues(m *dto.Metric, want map[string]string) bool {
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

// helpOf is the HELP of each family with series in reg.
func helpOf(t *testing.T, reg *prometheus.Registry) map[string]string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range families {
		out[f.GetName()] = f.GetHelp()
	}
	return out
}

// testCount counts the series a gauge vector holds, registered or not.
func testCount(v *prometheus.GaugeVec) int {
	ch := make(chan prometheus.Metric, 100)
	v.Collect(ch)
	close(ch)
	return len(ch)
}
