package reconcile_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// A node whose record of the Skyhook someone overwrote with something that
// is not JSON is held, not started over (that would run again what is
// complete there): nothing runs on it and its annotation is left as it is,
// NodeStateMalformed (NodeWright's condition, reason and message) names it
// and the Skyhook is not Ready; once the record is repaired the condition
// goes and the Skyhook is Ready again, still without a stage pod.
func TestUnreadableRecordHoldsTheNode(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	createNodes(t, simnode.Numbered("malformed", 2, map[string]string{"pool": "malformed"})...)
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "malformed"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "malformed"}},
			Packages: skyhookv1.Packages{"mypkg": {
				PackageRef: skyhookv1.PackageRef{Version: "2.1.4"},
				Image:      "ghcr.io/nvidia/skyhook/agentless",
			}},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "malformed", 2*time.Minute, isReady)

	pods := countStagePods(t, "malformed")
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: "malformed-0"}, node); err != nil {
		t.Fatal(err)
	}
	key := skyhookv1.NodeStateAnnotation("malformed")
	valid := node.Annotations[key]
	annotate := func(value string) {
		t.Helper()
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
		if err := c.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "malformed-0"}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}

	annotate("{not-valid-json")
	// The patch helper writes the conditions before the other fields:
	// wait for both.
	got := waitSkyhook(t, "malformed", time.Minute, func(sk *skyhookv1.Skyhook) bool {
		return conditions.IsTrue(sk, skyhookv1.NodeStateMalformedCondition) && sk.Status.CompleteNodes == "1/2"
	})
	cond := conditions.Get(got, skyhookv1.NodeStateMalformedCondition)
	if cond.Reason != "ParseError" || !strings.Contains(cond.Message, "nodeState annotation cannot be parsed on 1 node(s): malformed-...") {
		t.Errorf("NodeStateMalformed %s: %s; want ParseError naming 1 node, its name cut to 10 characters", cond.Reason, cond.Message)
	}
	if conditions.IsTrue(got, meta.ReadyCondition) {
		t.Errorf("Ready while a record is unreadable: %+v", got.Status)
	}
	time.Sleep(3 * time.Second) // passes that could start the node over
	if err := c.Get(ctx, client.ObjectKey{Name: "malformed-0"}, node); err != nil {
		t.Fatal(err)
	}
	if node.Annotations[key] != "{not-valid-json" || len(pods()) != 0 {
		t.Errorf("the held node was touched: record %q, stage pods %v", node.Annotations[key], pods())
	}

	annotate(valid)
	got = waitSkyhook(t, "malformed", time.Minute, func(sk *skyhookv1.Skyhook) bool {
		return isReady(sk) && conditions.Get(sk, skyhookv1.NodeStateMalformedCondition) == nil && sk.Status.Status == skyhookv1.StatusComplete
	})
	if got.Status.Status != skyhookv1.StatusComplete || len(pods()) != 0 {
		t.Errorf("after the repair: status %s, stage pods %v; want complete and none", got.Status.Status, pods())
	}
}
