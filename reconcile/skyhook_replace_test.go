package reconcile_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// A stage pod that runs what the spec no longer declares is replaced, as
// NodeWright replaces it (its validate-packages scenario): a spec change
// that leaves the package's definition as it was leaves the running stage
// alone; fixing the package's env deletes the hanging pod, says so in a
// StagePodReplaced event, and the stage runs again with the fix.
func TestOutdatedStagePodIsReplaced(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	createNodes(t, simnode.Node{Name: "replace-0", Labels: map[string]string{"pool": "replace"}})
	hanging := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	hanging.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "10m"}}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "replace"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "replace"}},
			Packages:     skyhookv1.Packages{"tuning": hanging},
		},
	}
	created := stagePodsCreated(t, "replace")
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	eventually(t, "the hanging apply pod", func() bool { return len(created()) == 1 })
	first := created()[0]

	edit := func(change func(*skyhookv1.Skyhook)) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
				return err
			}
			change(sk)
			return c.Update(ctx, sk)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Another package joins and completes beside it: the running stage's
	// definition is unchanged, so it goes on (well inside the tests' 12 s
	// stage timeout, which would end it otherwise).
	edit(func(sk *skyhookv1.Skyhook) { sk.Spec.Packages["other"] = pkg("1.0.0", "ghcr.io/x/other", nil) })
	eventually(t, "the other package to complete", func() bool {
		return strings.Contains(getNode(t, "replace-0").Annotations[skyhookv1.NodeStateAnnotation("replace")], `"other|1.0.0":{"name":"other","version":"1.0.0","image":"ghcr.io/x/other","stage":"config","state":"complete"}`)
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(first), &corev1.Pod{}); err != nil || !slices.Equal(stagesRun(created()[1:]), []string{"apply", "config"}) {
		t.Fatalf("the running stage was cut short by a change that is not its package's: %v; stages run beside it %v, want other's apply and config", err, stagesRun(created()[1:]))
	}

	// The package's env is fixed: the hanging pod goes, the stage reruns.
	edit(func(sk *skyhookv1.Skyhook) {
		fixed := sk.Spec.Packages["tuning"]
		fixed.Env = nil
		sk.Spec.Packages["tuning"] = fixed
	})
	testenv.WaitEvent(t, env, testenv.Event{Type: corev1.EventTypeNormal, Regarding: "replace", Reason: "StagePodReplaced", Note: first.Name})
	waitSkyhook(t, "replace", time.Minute, isReady)
	if err := c.Get(ctx, client.ObjectKeyFromObject(first), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("the outdated pod is still there: %v", err)
	}
	applies := 0
	for _, pod := range created() {
		if stagepod.PackageOf(pod) == "tuning" && pod.Labels["skyhook.nvidia.com/stage"] == "apply" {
			applies++
		}
	}
	if applies != 2 {
		t.Errorf("%d apply pods of tuning, want the replaced one and its replacement", applies)
	}
}
