package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// A failing step: each failed try is shown on the package's entry
// (erroring, with its restarts) while the node stays in progress and the
// stage is tried again, as NodeWright v0.20 shows it; once it failed for
// good (the first try and JOB_BACKOFF_LIMIT=3 more) the node is erroring
// with the exit code and where the logs are; the failed pod stays for its
// logs; a fix of the spec recovers.
func TestFailingStepErrorsThenSpecFixRecovers(t *testing.T) {
	createNodes(t, simnode.Numbered("failing", 2, map[string]string{"pool": "failing"})...)
	c := k8sClient(t)
	ctx := context.Background()
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "failing"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "failing"}},
			Packages: skyhookv1.Packages{"tuning": {
				PackageRef: skyhookv1.PackageRef{Version: "1.0.0"},
				Image:      "ghcr.io/nvidia/tuning",
				// The simulated agent exits 7 (see cmd/skyhook/sandbox/cluster).
				Env: []corev1.EnvVar{{Name: simnode.ExitCodeEnv, Value: "7"}},
			}},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })

	retrying := waitSkyhook(t, "failing", time.Minute, func(sk *skyhookv1.Skyhook) bool {
		return len(sk.Status.NodesNeedingAttention) > 0 && strings.Contains(sk.Status.NodesNeedingAttention[0].Message, "attempt 1 of 4 failed, tried again")
	})
	if retrying.Status.Status != skyhookv1.StatusInProgress || retrying.Status.NodesNeedingAttention[0].Status != skyhookv1.StatusInProgress {
		t.Errorf("after a first failed try: status %s, attention %+v; want in progress", retrying.Status.Status, retrying.Status.NodesNeedingAttention[0])
	}
	var first corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: retrying.Status.NodesNeedingAttention[0].Name}, &first); err != nil {
		t.Fatal(err)
	}
	if first.Labels["skyhook.nvidia.com/status_failing"] != "in_progress" || !strings.Contains(first.Annotations["skyhook.nvidia.com/nodeState_failing"], `"state":"erroring"`) {
		t.Errorf("node %s after a failed try: label %q, record %s; want in_progress with the package erroring", first.Name,
			first.Labels["skyhook.nvidia.com/status_failing"], first.Annotations["skyhook.nvidia.com/nodeState_failing"])
	}

	got := waitSkyhook(t, "failing", 2*time.Minute, func(sk *skyhookv1.Skyhook) bool {
		return sk.Status.Status == skyhookv1.StatusErroring && len(sk.Status.NodesNeedingAttention) == 2 &&
			sk.Status.NodesNeedingAttention[1].Status == skyhookv1.StatusErroring
	})
	msg := got.Status.NodesNeedingAttention[0].Message
	for _, want := range []string{"package tuning 1.0.0, stage apply", "container tuning-apply exited with code 7", "logs: kubectl logs -n skyhook-system"} {
		if !strings.Contains(msg, want) {
			t.Errorf("attention message %q lacks %q", msg, want)
		}
	}
	if conditions.IsTrue(got, meta.ReadyCondition) {
		t.Error("Ready while erroring")
	}
	var node corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: "failing-0"}, &node); err != nil {
		t.Fatal(err)
	}
	if node.Labels["skyhook.nvidia.com/status_failing"] != "erroring" || !strings.Contains(node.Annotations["skyhook.nvidia.com/nodeState_failing"], `"stage":"apply","state":"erroring"`) {
		t.Errorf("node record: label %q, state %s", node.Labels["skyhook.nvidia.com/status_failing"], node.Annotations["skyhook.nvidia.com/nodeState_failing"])
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(operatorNamespace), client.MatchingLabels{stagepod.SkyhookLabel: "failing"}); err != nil || len(pods.Items) == 0 {
		t.Fatalf("the failed stage pods are gone (%v); their logs must stay reachable", err)
	}
	// The steps' node-metadata files: the node's labels and the Skyhook's
	// packages, snapshotted into the pod (the apiserver took its downward
	// API volume).
	if meta := pods.Items[0].Annotations; !strings.Contains(meta[stagepod.NodeLabelsAnnotation], `"pool":"failing"`) ||
		!strings.Contains(meta[stagepod.PackagesAnnotation], `"tuning":{"name":"tuning","version":"1.0.0","image":"ghcr.io/nvidia/tuning"}`) {
		t.Errorf("node metadata of the stage pod: labels %s, packages %s", meta[stagepod.NodeLabelsAnnotation], meta[stagepod.PackagesAnnotation])
	}

	waitWarning(t, "failing", "Stalled", "exited with code 7")
	// Each failed pod counts once however many passes read it.
	// Each failed pod counts once however many passes read it: 4 tries on
	// each of the 2 nodes (the last try's pod stays, the others went with
	// their retry).
	if n := testenv.MetricSum(t, "skyhook_stage_failures_total", map[string]string{"skyhook": "failing", "package": "tuning", "stage": "apply"}); n != 8 {
		t.Errorf("skyhook_stage_failures_total = %v, want 8 (4 tries on 2 nodes); %d failed pods kept", n, len(pods.Items))
	}

	// Fix the spec: the next generation retries at once and completes.
	if err := c.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
		t.Fatal(err)
	}
	pkg := sk.Spec.Packages["tuning"]
	pkg.Env = nil
	sk.Spec.Packages["tuning"] = pkg
	if err := c.Update(ctx, sk); err != nil {
		t.Fatal(err)
	}
	got = waitSkyhook(t, "failing", time.Minute, isReady)
	if got.Status.CompleteNodes != "2/2" || len(got.Status.NodesNeedingAttention) != 0 {
		t.Errorf("after the fix: %+v", got.Status)
	}
}
