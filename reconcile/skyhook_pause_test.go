package reconcile_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// The pause annotation stops the work: no node starts while it is set and
// the running stage is stopped, as NodeWright v0.20 suspends its Jobs (its
// pod goes, its entry stays in progress, no try is spent); the status says
// paused; removing it resumes, running that stage again from its start.
func TestPauseStopsNewWorkAndResumes(t *testing.T) {
	createNodes(t, simnode.Numbered("pause", 3, map[string]string{"pool": "pause"})...)
	c := k8sClient(t)
	ctx := context.Background()
	created := countStagePods(t, "pause")
	one := 1
	p := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "4s"}}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "pause"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": "pause"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &one},
			Packages:           skyhookv1.Packages{"tuning": p},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	eventually(t, "the first node to start", func() bool { return created()["pause-0/apply"] == 1 })

	setPause := func(paused bool) {
		t.Helper()
		value := "null" // removes the annotation
		if paused {
			value = `"true"`
		}
		patch := []byte(`{"metadata":{"annotations":{"skyhook.nvidia.com/pause":` + value + `}}}`)
		if err := c.Patch(ctx, sk, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
	}
	setPause(true)
	waitSkyhook(t, "pause", time.Minute, func(s *skyhookv1.Skyhook) bool { return s.Status.Status == skyhookv1.StatusPaused })
	eventually(t, "the running apply on pause-0 to be stopped", func() bool {
		var pods corev1.PodList
		return c.List(ctx, &pods, client.InNamespace(operatorNamespace), client.MatchingLabels{stagepod.SkyhookLabel: "pause"}) == nil && len(pods.Items) == 0
	})
	if state := getNode(t, "pause-0").Annotations["skyhook.nvidia.com/nodeState_pause"]; !strings.Contains(state, `"stage":"apply","state":"in_progress"`) || strings.Contains(state, "restarts") {
		t.Errorf("pause-0's record after the stop: %s; want apply in progress, no try spent", state)
	}
	before := created()
	time.Sleep(3 * time.Second)
	after := created()
	if len(after) != len(before) || after["pause-1/apply"] != 0 || after["pause-0/apply"] != 1 {
		t.Fatalf("work started while paused: before %v, after %v", before, after)
	}

	// Every node of a paused Skyhook reads paused, as NodeWright marks them.
	eventually(t, "every node to read paused", func() bool { return statusesOf(t, "pause", "pool=pause") == "paused paused paused" })

	setPause(false)
	got := waitSkyhook(t, "pause", time.Minute, isReady)
	if got.Status.CompleteNodes != "3/3" {
		t.Errorf("after resuming: %+v", got.Status)
	}
	if n := created()["pause-0/apply"]; n != 2 {
		t.Errorf("pause-0's apply ran %d times, want 2: stopped by the pause, then again from its start", n)
	}
	eventually(t, "every node to read complete", func() bool { return statusesOf(t, "pause", "pool=pause") == "complete complete complete" })

	// Disabled: every node reads disabled, the records stay; enabled
	// again, they read complete and nothing runs.
	before = created()
	setAnnotation(t, sk, skyhookv1.DisableAnnotation, "true")
	eventually(t, "every node to read disabled", func() bool { return statusesOf(t, "pause", "pool=pause") == "disabled disabled disabled" })
	if n := getNode(t, "pause-0"); n.Annotations[skyhookv1.NodeStateAnnotation("pause")] == "" {
		t.Error("disabling dropped the node's record")
	}
	// Its metrics say so, as NodeWright's: the nodes it selects, each disabled.
	if v := metricValue(t, "skyhook_node_target_count", map[string]string{"skyhook_name": "pause"}); v != 3 {
		t.Errorf("skyhook_node_target_count of the disabled Skyhook = %v, want 3", v)
	}
	if v := metricValue(t, "skyhook_node_status_count", map[string]string{"skyhook_name": "pause", "status": "disabled"}); v != 3 {
		t.Errorf("skyhook_node_status_count disabled = %v, want 3", v)
	}
	setAnnotation(t, sk, skyhookv1.DisableAnnotation, "")
	eventually(t, "every node to read complete again", func() bool { return statusesOf(t, "pause", "pool=pause") == "complete complete complete" })
	if after := created(); len(after) != len(before) {
		t.Errorf("stage pods after disable and enable: before %v, after %v", before, after)
	}
}

// statusesOf is the status label of the Skyhook on the selected nodes, by
// node name, space separated (an annotation that disagrees shows as "!").
func statusesOf(t *testing.T, skyhook, selector string) string {
	t.Helper()
	var nodes corev1.NodeList
	sel, err := labels.Parse(selector)
	if err != nil {
		t.Fatal(err)
	}
	if err := k8sClient(t).List(context.Background(), &nodes, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		t.Fatal(err)
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })
	var out []string
	for _, n := range nodes.Items {
		key := skyhookv1.StatusKey(skyhook)
		if n.Labels[key] != n.Annotations[key] {
			out = append(out, "!")
			continue
		}
		out = append(out, n.Labels[key])
	}
	return strings.Join(out, " ")
}

// setAnnotation sets an annotation of the Skyhook, or removes it for "".
func setAnnotation(t *testing.T, sk *skyhookv1.Skyhook, key, value string) {
	t.Helper()
	v := any(value)
	if value == "" {
		v = nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: v}}})
	if err := k8sClient(t).Patch(context.Background(), sk, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
}
