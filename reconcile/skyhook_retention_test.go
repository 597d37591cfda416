package reconcile_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/retention"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// With JOB_TTL_SUCCEEDED and JOB_TTL_FAILED set, stage pods are kept for
// their logs as NodeWright keeps its Jobs: a succeeded stage's pod once
// recorded, and of a failing stage the first and the latest failed attempt
// (the sweep takes those between); the rollout goes on past kept pods as
// past deleted ones (tuning completes, broken gives up after its third
// try). Once their time is up, the sweep deletes them. For both kinds: a
// NodeWright's pods are found by its own owner label.
func TestStagePodsAreKeptForTheirLogs(t *testing.T) {
	restartOperator(t, func(o *operator.Options) {
		o.SucceededTTL, o.FailedTTL, o.MaxAttempts = time.Hour, 24*time.Hour, 3
	})
	eachKind(t, func(t *testing.T, k kindCase) {
		createNodes(t, simnode.Numbered(k.name("keep"), 1, map[string]string{"pool": k.name("keep")})...)
		c := k8sClient(t)
		ctx := context.Background()
		failing := pkg("1.0.0", "ghcr.io/x/broken", nil)
		failing.Env = []corev1.EnvVar{{Name: simnode.ExitCodeEnv, Value: "2"}}
		k.create(t, "keep", skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": k.name("keep")}},
			Packages:     skyhookv1.Packages{"tuning": pkg("1.0.0", "ghcr.io/x/tuning", nil), "broken": failing},
		})
		k.wait(t, "keep", 2*time.Minute, func(s *skyhookv1.Skyhook) bool { return s.Status.Status == skyhookv1.StatusErroring })

		pods := func() map[string]string { // "package/stage/attempt": retained label, or "live"
			var list corev1.PodList
			if err := c.List(ctx, &list, client.InNamespace(operatorNamespace), client.MatchingLabels{k.OwnerLabel(): k.name("keep")}); err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, p := range list.Items {
				mark := p.Labels[retention.RetainedLabel]
				if mark == "" {
					mark = "live"
				}
				for _, view := range stagepod.Views(&p) { // a pod of several packages under each
					for _, stage := range stagepod.Stages(view) { // a run's pod under each of its stages
						out[stagepod.PackageOf(view)+"/"+string(stage)+"/"+view.Annotations[stagepod.AttemptAnnotation]] = mark
					}
				}
			}
			return out
		}
		eventually(t, "tuning's stages kept as succeeded", func() bool {
			got := pods()
			return got["tuning/apply/0"] == retention.Succeeded && got["tuning/config/0"] == retention.Succeeded
		})
		sweeper := &retention.Sweeper{Client: c, Namespace: operatorNamespace}
		if err := sweeper.Sweep(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the first and the latest failed attempt, no other", func() bool {
			got := pods()
			_, middle := got["broken/apply/1"]
			return got["broken/apply/0"] == retention.Failed && got["broken/apply/2"] == "live" && !middle
		})
		if err := sweeper.Sweep(ctx, time.Now().Add(25*time.Hour)); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the kept pods gone once their time is up", func() bool {
			got := pods()
			for key, mark := range got { // only broken's latest try, a run's pod under each of its stages
				if mark != "live" || !strings.HasPrefix(key, "broken/") || !strings.HasSuffix(key, "/"+strconv.Itoa(2)) {
					return false
				}
			}
			return got["broken/apply/2"] == "live"
		})
	})
}
