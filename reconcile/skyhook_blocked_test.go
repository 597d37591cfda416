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
)

// A node whose taints the Skyhook does not tolerate gets no stage pod and
// is reported blocked, by name and taint, and its status says blocked (node
// label and annotation, nodeStatus, NodeWright's node status count; the
// Skyhook's status too once every node left is blocked, as NodeWright's
// taint-scheduling scenario expects); an ignored node is left out and
// reported; tolerating the taint unblocks the rollout.
func TestUntoleratedTaintAndIgnoredNodeAreBlocked(t *testing.T) {
	createNodes(t,
		simnode.Node{Name: "blocked-free", Labels: map[string]string{"pool": "blocked"}},
		simnode.Node{Name: "blocked-tainted", Labels: map[string]string{"pool": "blocked"},
			Taints: []corev1.Taint{{Key: "dedicated", Value: "inference", Effect: corev1.TaintEffectNoSchedule}}},
		simnode.Node{Name: "blocked-ignored", Labels: map[string]string{"pool": "blocked", skyhookv1.IgnoreNodeLabel: "true"}})
	c := k8sClient(t)
	ctx := context.Background()
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "blocked"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "blocked"}},
			Packages:     skyhookv1.Packages{"tuning": pkg("1.0.0", "ghcr.io/x/tuning", nil)},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })

	got := waitSkyhook(t, "blocked", time.Minute, func(s *skyhookv1.Skyhook) bool {
		return s.Status.CompleteNodes == "1/2" && conditions.IsTrue(s, skyhookv1.NodesBlockedCondition) && s.Status.Status == skyhookv1.StatusBlocked
	})
	if got.Status.NodeStatus["blocked-tainted"] != skyhookv1.StatusBlocked || got.Status.NodeStatus["blocked-free"] != skyhookv1.StatusComplete {
		t.Errorf("nodeStatus %v, want blocked-tainted blocked and blocked-free complete", got.Status.NodeStatus)
	}
	var tainted corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: "blocked-tainted"}, &tainted); err != nil {
		t.Fatal(err)
	}
	key := skyhookv1.StatusKey("blocked")
	if _, hasRecord := tainted.Annotations[skyhookv1.NodeStateAnnotation("blocked")]; tainted.Labels[key] != "blocked" || tainted.Annotations[key] != "blocked" || hasRecord {
		t.Errorf("tainted node: label %q, annotation %q, a record %v; want blocked, blocked and no record (nothing started there)",
			tainted.Labels[key], tainted.Annotations[key], hasRecord)
	}
	for status, want := range map[string]float64{"blocked": 2, "waiting": 0, "complete": 1} { // the ignored node counts blocked, as upstream's
		if v := metricValue(t, "skyhook_node_status_count", map[string]string{"skyhook_name": "blocked", "status": status}); v != want {
			t.Errorf("skyhook_node_status_count %s = %v, want %v", status, v, want)
		}
	}
	msg := conditions.GetMessage(got, skyhookv1.NodesBlockedCondition)
	for _, want := range []string{"2 nodes blocked", "blocked-tainted (taints not tolerated: dedicated=inference:NoSchedule", "blocked-ignored (ignored: labelled skyhook.nvidia.com/ignore=true)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("NodesBlocked message %q lacks %q", msg, want)
		}
	}
	if conditions.IsTrue(got, meta.ReadyCondition) {
		t.Error("Ready with a selected node blocked")
	}
	// The tainted node reads blocked, as NodeWright marks it; the ignored
	// node is left unmarked.
	eventually(t, "the tainted node to read blocked", func() bool {
		return statusesOf(t, "blocked", "pool=blocked") == "complete  blocked"
	})
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(operatorNamespace), client.MatchingLabels{stagepod.SkyhookLabel: "blocked"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "blocked-free" {
			t.Errorf("stage pod %s placed on %s", p.Name, p.Spec.NodeName)
		}
	}

	if err := c.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
		t.Fatal(err)
	}
	sk.Spec.AdditionalTolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
	if err := c.Update(ctx, sk); err != nil {
		t.Fatal(err)
	}
	got = waitSkyhook(t, "blocked", time.Minute, isReady)
	if got.Status.CompleteNodes != "2/2" || got.Status.Status != skyhookv1.StatusComplete {
		t.Errorf("complete %s, status %s after tolerating the taint", got.Status.CompleteNodes, got.Status.Status)
	}
	if s := statusesOf(t, "blocked", "pool=blocked"); s != "complete  complete" {
		t.Errorf("statuses by node (free, ignored, tainted): %q; want complete, none, complete", s)
	}
	if !conditions.IsTrue(got, skyhookv1.NodesBlockedCondition) || !strings.Contains(conditions.GetMessage(got, skyhookv1.NodesBlockedCondition), "1 nodes blocked: blocked-ignored") {
		t.Errorf("the ignored node is no longer reported: %v", got.Status.Conditions)
	}
}
