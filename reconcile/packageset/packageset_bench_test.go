package packageset_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// BenchmarkPackageSetRevisionToApplied measures, per new artifact revision
// of a set of 50 Skyhooks (each with a new package version), the time from
// the source showing the revision to the PackageSet having applied all 50
// (dry run of all, then apply of all, through the admission webhooks).
//
//	go test -run XXX -bench PackageSetRevisionToApplied -benchtime 5x ./reconcile/packageset/
var benchRuns int

func BenchmarkPackageSetRevisionToApplied(b *testing.B) {
	c := k8sClient(b)
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	benchRuns++ // the benchmark function runs more than once per process
	name := fmt.Sprintf("bench-%d", benchRuns)
	src := newSource(b, "bench", name)
	set := func(version string) map[string]string {
		var docs []string
		for i := range 50 {
			docs = append(docs, skyhookManifest(fmt.Sprintf("%s-%02d", name, i), version))
		}
		return map[string]string{"set/all.yaml": strings.Join(docs, "---\n")}
	}
	src.publish("bench@sha1:0", set("1.0.0"))
	ps := &skyhookv1.PackageSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench"},
		Spec: skyhookv1.PackageSetSpec{
			SourceRef: skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: name},
			Path:      "set", Interval: metav1.Duration{Duration: time.Hour}, Prune: true,
		},
	}
	if err := c.Create(ctx, ps); err != nil {
		b.Fatal(err)
	}
	key := client.ObjectKeyFromObject(ps)
	applied := func(revision string) {
		got := &skyhookv1.PackageSet{}
		for c.Get(ctx, key, got) != nil || got.Status.LastAppliedRevision != revision || !conditions.IsReady(got) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	applied("bench@sha1:0")
	b.ResetTimer()
	for i := range b.N {
		revision := fmt.Sprintf("bench@sha1:%d", i+1)
		files := set(fmt.Sprintf("1.0.%d", i+1))
		src.publish(revision, files)
		applied(revision)
	}
	b.StopTimer()
	_ = c.Delete(ctx, ps)
}
