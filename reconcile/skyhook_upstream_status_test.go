package reconcile_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// What NodeWright's readers (its end-to-end suite, scripts, dashboard) read
// from a finished rollout's status is there, in its format: nodeState and
// nodeStatus per node, nodeBootIds, an emptied nodePriority counted in
// nodeOrderOffset, compartmentStatuses, and its conditions bare and
// prefixed.
func TestUpstreamReadersSeeTheirStatus(t *testing.T) {
	createNodes(t, simnode.Numbered("readers", 2, map[string]string{"pool": "readers"})...)
	c := k8sClient(t)
	ctx := context.Background()
	one := 1
	const sha = "sha256:a9cc86f68d73e874bf2dfbabab5e8a8f710ad78411a03764d1b42aa1b5cda7dd"
	pinned := pkg("1.2", "ghcr.io/nvidia/skyhook/agentless", nil)
	pinned.ContainerSHA = sha
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "readers"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": "readers"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &one},
			Packages:           skyhookv1.Packages{"dexter": pkg("1.2.3", "ghcr.io/nvidia/skyhook/agentless", nil), "foobar": pinned},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	got := waitSkyhook(t, "readers", time.Minute, func(s *skyhookv1.Skyhook) bool { return isReady(s) && len(s.Status.NodeState) == 2 })

	s := got.Status
	for _, name := range []string{"readers-0", "readers-1"} {
		dexter, foobar := s.NodeState[name]["dexter|1.2.3"], s.NodeState[name]["foobar|1.2"]
		if dexter.Stage != skyhookv1.StageConfig || dexter.State != skyhookv1.StateComplete || dexter.Image != "ghcr.io/nvidia/skyhook/agentless" {
			t.Errorf("%s nodeState dexter %+v", name, dexter)
		}
		if foobar.ContainerSHA != sha || foobar.State != skyhookv1.StateComplete {
			t.Errorf("%s nodeState foobar %+v, want complete with containerSHA %s", name, foobar, sha)
		}
		if s.NodeStatus[name] != skyhookv1.StatusComplete {
			t.Errorf("%s nodeStatus %q", name, s.NodeStatus[name])
		}
		var node corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
			t.Fatal(err)
		}
		if boot := node.Status.NodeInfo.BootID; boot != "" && s.NodeBootIDs[name] != boot {
			t.Errorf("%s nodeBootIds %q, want %q", name, s.NodeBootIDs[name], boot)
		}
	}
	if len(s.NodePriority) != 0 || s.NodeOrderOffset != 2 {
		t.Errorf("nodePriority %v, nodeOrderOffset %d: want empty and 2 (both nodes started and finished)", s.NodePriority, s.NodeOrderOffset)
	}
	want := skyhookv1.CompartmentProgress{Matched: 2, Ceiling: 1, InProgress: 0, Completed: 2, ProgressPercent: 100}
	if d := s.CompartmentStatuses[skyhookv1.DefaultCompartmentName]; d != want {
		t.Errorf("compartmentStatuses.__default__ %+v, want %+v", d, want)
	}
	for _, c := range []struct {
		kind   string
		status metav1.ConditionStatus
		reason string
	}{
		{"Ready", metav1.ConditionTrue, "NodesConverged"},
		{"skyhook.nvidia.com/Ready", metav1.ConditionTrue, "NodesConverged"},
		{"skyhook.nvidia.com/Transition", metav1.ConditionTrue, "complete"},
		{"TaintNotTolerable", metav1.ConditionFalse, "TaintNotTolerable"},
		{"skyhook.nvidia.com/TaintNotTolerable", metav1.ConditionFalse, "TaintNotTolerable"},
		{"NodesIgnored", metav1.ConditionFalse, "NodesIgnored"},
		{"skyhook.nvidia.com/NodesIgnored", metav1.ConditionFalse, "NodesIgnored"},
		{"ApplyPackage", metav1.ConditionTrue, "ApplyPackage"},
		{"skyhook.nvidia.com/ApplyPackage", metav1.ConditionTrue, "ApplyPackage"},
	} {
		got := conditions.Get(got, c.kind)
		if got == nil || got.Status != c.status || got.Reason != c.reason {
			t.Errorf("condition %s: %+v, want status %s reason %s", c.kind, got, c.status, c.reason)
		}
	}
	// The operator's version where NodeWright writes its own.
	version := got.Annotations["skyhook.nvidia.com/version"]
	if version == "" {
		t.Error("no skyhook.nvidia.com/version annotation on the Skyhook")
	}
	var node corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: "readers-0"}, &node); err != nil {
		t.Fatal(err)
	}
	if v := node.Annotations["skyhook.nvidia.com/version_readers"]; v == "" || v != version {
		t.Errorf("node annotation version_readers %q, want the operator's %q", v, version)
	}
	// NodeWright's node conditions, as its e2e suite asserts them.
	wantConditions := map[corev1.NodeConditionType][2]string{
		"skyhook.nvidia.com/readers/NotReady": {"False", "Complete"},
		"skyhook.nvidia.com/readers/Erroring": {"False", "Not Erroring"},
	}
	for _, cond := range node.Status.Conditions {
		if w, ok := wantConditions[cond.Type]; ok {
			if string(cond.Status) != w[0] || cond.Reason != w[1] {
				t.Errorf("node condition %s: %s %q, want %s %q", cond.Type, cond.Status, cond.Reason, w[0], w[1])
			}
			delete(wantConditions, cond.Type)
		}
	}
	if len(wantConditions) > 0 {
		t.Errorf("node conditions missing: %v (have %v)", wantConditions, node.Status.Conditions)
	}
	upstreamMetricsExported(t, "readers")
	// A Skyhook publishes NodeWright's gauges under both names, so both of
	// NodeWright's dashboards show it.
	dashboardQueriesFindTheirSeries(t, "testdata/nodewright-dashboard-queries.txt", "readers")
	dashboardQueriesFindTheirSeries(t, "testdata/nodewright-v0.20-dashboard-queries.txt", "readers")
}

// dashboardQueriesFindTheirSeries reads the queries of one of NodeWright's
// Grafana dashboards (a file of testdata, 42 queries) and checks that every
// metric they select has series of the rollout with every label they match
// on, so each panel finds the rollout's series here.
func dashboardQueriesFindTheirSeries(t *testing.T, file, rollout string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	labelsOf := map[string]map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if rolloutName(m) != rollout {
				continue
			}
			if labelsOf[f.GetName()] == nil {
				labelsOf[f.GetName()] = map[string]bool{}
			}
			for _, l := range m.GetLabel() {
				labelsOf[f.GetName()][l.GetName()] = true
			}
		}
	}
	selector := regexp.MustCompile(`((?:skyhook|nodewright)_[a-z_]+)\s*(\{([^}]*)\})?`)
	matcher := regexp.MustCompile(`([a-z_]+)\s*(=~|!~|!=|=)`)
	queries, selectors := 0, 0
	for _, query := range strings.Split(string(data), "\n---\n")[1:] {
		queries++
		for _, m := range selector.FindAllStringSubmatch(query, -1) {
			name := m[1]
			if name == "skyhook_name" || name == "nodewright_name" {
				continue // the label, in label_join and label_values
			}
			selectors++
			keys, ok := labelsOf[name]
			if !ok {
				t.Errorf("%s: the dashboard queries %s, which has no series of %s: %s", file, name, rollout, query)
				continue
			}
			for _, l := range matcher.FindAllStringSubmatch(m[3], -1) {
				if !keys[l[1]] {
					t.Errorf("%s: the dashboard matches %s on label %s, which it does not have: %s", file, name, l[1], query)
				}
			}
		}
	}
	if queries != 42 || selectors < 42 {
		t.Errorf("%s: read %d queries and %d selectors; the dashboard has 42 queries, each selecting at least one metric", file, queries, selectors)
	}
}

// rolloutName is the rollout a series of NodeWright's metrics or of this
// project's belongs to: its nodewright_name, skyhook_name or skyhook label.
func rolloutName(m *dto.Metric) string {
	for _, l := range m.GetLabel() {
		switch l.GetName() {
		case "nodewright_name", "skyhook_name", "skyhook":
			return l.GetValue()
		}
	}
	return ""
}

// currentName is the name NodeWright v0.20 gives a gauge of NodeWright's
// earlier releases, and of its label for the rollout's name: nodewright_
// for skyhook_.
func currentName(legacy string) string {
	if rest, ok := strings.CutPrefix(legacy, "skyhook_"); ok {
		return "nodewright_" + rest
	}
	return legacy
}

// currentLabels are labels of a legacy gauge renamed as currentName.
func currentLabels(legacy map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range legacy {
		out[currentName(k)] = v
	}
	return out
}

// upstreamMetricsExported checks that every metric NodeWright exports (its
// dashboard's included; testdata/nodewright-metrics.txt) has a series for
// the rollout with exactly NodeWright's labels, under both of NodeWright
// v0.20's names (the legacy one, and nodewright_* labelled
// nodewright_name), and the values of a finished rollout of two nodes with
// two packages in both.
func upstreamMetricsExported(t *testing.T, rollout string) {
	t.Helper()
	data, err := os.ReadFile("testdata/nodewright-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		byName[f.GetName()] = f
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		current := []string{currentName(fields[0])}
		for _, l := range fields[1:] {
			current = append(current, currentName(l))
		}
		for _, fields := range [][]string{fields, current} {
			seriesWithLabels(t, byName, rollout, fields)
		}
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"skyhook_status", map[string]string{"skyhook_name": rollout, "status": "complete"}, 1},
		{"skyhook_status", map[string]string{"skyhook_name": rollout, "status": "in_progress"}, 0},
		{"skyhook_node_status_count", map[string]string{"skyhook_name": rollout, "status": "complete"}, 2},
		{"skyhook_node_target_count", map[string]string{"skyhook_name": rollout}, 2},
		{"skyhook_package_state_count", map[string]string{"skyhook_name": rollout, "package_name": "dexter", "package_version": "1.2.3", "state": "complete"}, 2},
		{"skyhook_package_stage_count", map[string]string{"skyhook_name": rollout, "package_name": "foobar", "package_version": "1.2", "stage": "config"}, 2},
		{"skyhook_rollout_matched_nodes", map[string]string{"skyhook_name": rollout, "policy_name": "legacy", "compartment_name": "__default__", "strategy": "fixed"}, 2},
		{"skyhook_rollout_ceiling", map[string]string{"skyhook_name": rollout, "compartment_name": "__default__"}, 1},
		{"skyhook_rollout_progress_percent", map[string]string{"skyhook_name": rollout, "compartment_name": "__default__"}, 100},
	} {
		if got := metricValue(t, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
		name, labels := currentName(c.name), currentLabels(c.labels)
		if got := metricValue(t, name, labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", name, labels, got, c.want)
		}
	}
}

// seriesWithLabels checks that the metric fields[0] has a series of the
// rollout whose label names are exactly fields[1:].
func seriesWithLabels(t *testing.T, byName map[string]*dto.MetricFamily, rollout string, fields []string) {
	t.Helper()
	name, want := fields[0], slices.Sorted(slices.Values(fields[1:]))
	f := byName[name]
	if f == nil {
		t.Errorf("metric %s is not exported", name)
		return
	}
	for _, m := range f.GetMetric() {
		if rolloutName(m) != rollout {
			continue
		}
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName())
		}
		slices.Sort(labels)
		if !slices.Equal(labels, want) {
			t.Errorf("%s has labels %v, want %v", name, labels, want)
		}
		return
	}
	t.Errorf("%s has no series for %s", name, rollout)
}
