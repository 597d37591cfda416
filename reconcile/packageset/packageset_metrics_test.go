package packageset_test

import (
	"context"
	"testing"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// A PackageSet's metrics follow its status: its Ready condition, the
// objects applied, each failed reconcile by reason; they go with it.
func TestPackageSetMetricsFollowItsStatus(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "metrics"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	src := newSource(t, "metrics", "metrics-repo")
	src.publish("main@sha1:aaaa", map[string]string{"sets/gpu.yaml": skyhookManifest("ps-metrics", "1.0.0")})
	ps := &skyhookv1.PackageSet{
		ObjectMeta: metav1.ObjectMeta{Name: "watched", Namespace: "metrics"},
		Spec: skyhookv1.PackageSetSpec{
			SourceRef: skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "metrics-repo"},
			Path:      "sets", Interval: metav1.Duration{Duration: time.Hour}, RetryInterval: &metav1.Duration{Duration: time.Second}, Prune: true,
		},
	}
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	series := map[string]string{"namespace": "metrics", "name": "watched"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range series {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	eventually(t, "Ready=True and one object in the metrics", func() bool {
		return testenv.MetricSum(t, "skyhook_packageset_condition", with(map[string]string{"status": "True"})) == 1 &&
			testenv.MetricSum(t, "skyhook_packageset_condition", with(map[string]string{"status": "False"})) == 0 &&
			testenv.MetricSum(t, "skyhook_packageset_applied_objects", series) == 1
	})

	src.publish("main@sha1:bbbb", map[string]string{"sets/gpu.yaml": skyhookManifest("ps-metrics", "not-a-version")})
	eventually(t, "Ready=False and the refused revision counted", func() bool {
		return testenv.MetricSum(t, "skyhook_packageset_condition", with(map[string]string{"status": "False"})) == 1 &&
			testenv.MetricSum(t, "skyhook_packageset_failures_total", with(map[string]string{"reason": "ValidationFailed"})) >= 1
	})

	if err := c.Delete(ctx, ps); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted PackageSet's series to go", func() bool {
		return testenv.MetricSum(t, "skyhook_packageset_condition", series) == -1 && testenv.MetricSum(t, "skyhook_packageset_failures_total", series) == -1
	})
}
