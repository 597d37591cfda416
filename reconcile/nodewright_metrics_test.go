package reconcile_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// A NodeWright's rollout publishes NodeWright v0.20's gauges as v0.20 does,
// nodewright_* labelled nodewright_name and skyhook_* labelled
// skyhook_name, so that both of NodeWright's dashboards find their series;
// and this project's metrics, labelled rollout_kind="NodeWright". Deleted,
// it leaves no series.
func TestNodeWrightPublishesItsMetricsUnderBothNames(t *testing.T) {
	createNodes(t, simnode.Numbered("nwmetrics", 2, map[string]string{"pool": "nwmetrics"})...)
	c := k8sClient(t)
	ctx := context.Background()
	one := 1
	nw := &nodewrightv1.NodeWright{
		ObjectMeta: metav1.ObjectMeta{Name: "nwmetrics"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": "nwmetrics"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &one},
			Packages: skyhookv1.Packages{"dexter": pkg("1.2.3", "ghcr.io/nvidia/skyhook/agentless", nil),
				"foobar": pkg("1.2", "ghcr.io/nvidia/skyhook/agentless", nil)},
		},
	}
	if err := c.Create(ctx, nw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, nw) })
	waitNodeWright(t, "nwmetrics", 2*time.Minute, func(nw *nodewrightv1.NodeWright) bool {
		return nw.Status.Status == skyhookv1.StatusComplete && nw.Status.ObservedGeneration == nw.Generation
	})

	upstreamMetricsExported(t, "nwmetrics")
	dashboardQueriesFindTheirSeries(t, "testdata/nodewright-v0.20-dashboard-queries.txt", "nwmetrics")
	dashboardQueriesFindTheirSeries(t, "testdata/nodewright-dashboard-queries.txt", "nwmetrics")

	own := func(more ...string) map[string]string {
		labels := map[string]string{"skyhook": "nwmetrics", "rollout_kind": "NodeWright"}
		for i := 0; i+1 < len(more); i += 2 {
			labels[more[i]] = more[i+1]
		}
		return labels
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"skyhook_nodes", own("status", "complete"), 2},
		{"skyhook_packages", own("package", "dexter", "version", "1.2.3", "stage", "config", "state", "complete"), 2},
		{"skyhook_rollout_budget", own(), 1},
		{"skyhook_stage_duration_seconds", own("package", "foobar", "stage", "apply", "result", "succeeded"), 2},
	} {
		if got := testenv.MetricSum(t, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if n := testenv.MetricSum(t, "skyhook_passes_total", own()); n < 1 {
		t.Errorf("skyhook_passes_total of the NodeWright = %v, want its passes counted", n)
	}
	// Its series of this project's metrics are all the NodeWright's: none
	// with an empty rollout_kind, which is a Skyhook's.
	for _, name := range []string{"skyhook_nodes", "skyhook_packages", "skyhook_passes_total", "skyhook_stage_duration_seconds"} {
		if n := testenv.MetricSum(t, name, map[string]string{"skyhook": "nwmetrics", "rollout_kind": ""}); n != -1 {
			t.Errorf("%s has a Skyhook's series of nwmetrics: %v", name, n)
		}
	}

	if err := c.Delete(ctx, nw); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the NodeWright to be gone", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: "nwmetrics"}, &nodewrightv1.NodeWright{}))
	})
	waitNoSeries(t, "nwmetrics")
}

// waitNoSeries waits until no series of the operator's names the rollout
// (its metrics are removed with it), and names those left if some stay.
func waitNoSeries(t *testing.T, rollout string) {
	t.Helper()
	var left []string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		left = seriesOf(t, rollout)
		return len(left) == 0, nil
	})
	if err != nil {
		t.Errorf("the series of the deleted %s stay: %v", rollout, left)
	}
}

// seriesOf lists the series of the operator running in this process that
// belong to a rollout of the name (see rolloutName), as name{labels}.
func seriesOf(t *testing.T, rollout string) []string {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if rolloutName(m) == rollout {
				out = append(out, fmt.Sprintf("%s%v", f.GetName(), m.GetLabel()))
			}
		}
	}
	slices.Sort(out)
	return out
}
