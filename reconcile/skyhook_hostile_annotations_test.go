package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// hostileOutcome is what the operator does with a value someone else wrote
// in a node's record of a Skyhook.
type hostileOutcome int

const (
	// held: the nodeState cannot be read; NodeStateMalformed names the
	// node, which nothing touches until it is repaired.
	held hostileOutcome = iota
	// reported: read as none (the value stays until the node's record is
	// next written); a MalformedNodeRecord warning names the node and the
	// annotation.
	reported
	// rewritten: the operator writes its own value back.
	rewritten
	// ignored: read, and harmless as it is (unknown keys, a record of a
	// package version the Skyhook does not declare, which stays as the
	// marker it is).
	ignored
)

// Every annotation (and the label) of a Skyhook's record that the
// operator reads, overwritten on a complete node by someone else with
// truncated JSON, the wrong types, the largest values the apiserver takes,
// unknown keys or a record of a version that does not exist: the operator
// never crashes (no reconcile panic, the operator still runs), never
// loops (a handful of writes to the node and a bounded number of
// reconciles over a window), reports what it cannot read (a condition or
// a warning event naming the node and the annotation) and holds, skips or
// rewrites it; no stage pod runs on any of the nodes. A 1 MiB value is
// not one of them: the apiserver refuses annotations over 256 KiB in all.
func TestHostileNodeAnnotations(t *testing.T) {
	const sk = "hostile"
	big := strings.Repeat("x", 200<<10) // under the 256 KiB the apiserver allows for all of a node's annotations
	nodeState, config, batch, interruptKey, status, version, cordonKey :=
		skyhookv1.NodeStateAnnotation(sk), skyhookv1.ConfigAnnotation(sk), skyhookv1.BatchAnnotation(sk),
		skyhookv1.InterruptAnnotation(sk), skyhookv1.StatusKey(sk), skyhookv1.VersionAnnotation(sk), skyhookv1.CordonAnnotation(sk)
	complete := `"mypkg|2.1.4":{"name":"mypkg","version":"2.1.4","image":"ghcr.io/nvidia/skyhook/agentless","stage":"config","state":"complete"}`
	cases := []struct {
		name    string
		key     string
		label   bool
		value   string
		outcome hostileOutcome
	}{
		{"nodeState truncated", nodeState, false, `{"mypkg|2.1.4":{"name":"mypkg","vers`, held},
		{"nodeState an array", nodeState, false, `[{"name":"mypkg"}]`, held},
		{"nodeState numbers for strings", nodeState, false, `{"mypkg|2.1.4":{"name":5,"version":2.14,"restarts":"many"}}`, held},
		{"nodeState null", nodeState, false, `null`, held},
		{"nodeState 200 KiB", nodeState, false, `{"` + big + ``, held},
		{"nodeState unknown keys", nodeState, false, `{` + strings.Replace(complete, `"state":"complete"`, `"state":"complete","surprise":{"deep":[1]}`, 1) + `}`, ignored},
		{"nodeState a version that does not exist", nodeState, false, `{` + complete + `,"ghost|0.0.0-none":{"name":"ghost","version":"0.0.0-none","image":"ghcr.io/x/ghost","stage":"apply","state":"complete"}}`, ignored},
		{"config truncated", config, false, `{"mypkg":"ab`, reported},
		{"config an array", config, false, `["mypkg"]`, reported},
		{"config numbers for strings", config, false, `{"mypkg":7}`, reported},
		{"config null", config, false, `null`, reported},
		{"config 200 KiB", config, false, big, reported},
		{"batch not a number", batch, false, `three`, reported},
		{"batch negative", batch, false, `-4`, reported},
		{"batch over int32", batch, false, `99999999999`, reported},
		{"interrupt truncated", interruptKey, false, `{"generation":1,"phase":"dr`, reported},
		{"interrupt wrong types", interruptKey, false, `{"generation":"1","phase":["drain"],"since":5}`, reported},
		{"interrupt unknown phase", interruptKey, false, `{"generation":1,"phase":"detonate","packages":["mypkg|2.1.4"],"interrupt":{"type":"reboot"}}`, reported},
		{"interrupt 200 KiB", interruptKey, false, big, reported},
		{"status label unknown", status, true, `on_fire`, rewritten},
		{"status annotation 200 KiB", status, false, big, rewritten},
		{"version garbage", version, false, `{"not":"a version"}`, ignored},
		{"cordon mark without a cordon", cordonKey, false, `yes please`, ignored},
	}

	c := k8sClient(t)
	ctx := context.Background()
	skyhook := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: sk},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": sk}},
			Packages: skyhookv1.Packages{"mypkg": {
				PackageRef: skyhookv1.PackageRef{Version: "2.1.4"},
				Image:      "ghcr.io/nvidia/skyhook/agentless",
				ConfigMap:  map[string]string{"a.conf": "a"},
			}},
		},
	}
	t.Cleanup(func() { _ = c.Delete(ctx, skyhook) }) // after the nodes go (cleanups run last in, first out)
	createNodes(t, simnode.Numbered(sk, len(cases), map[string]string{"pool": sk})...)
	if err := c.Create(ctx, skyhook); err != nil {
		t.Fatal(err)
	}
	waitSkyhook(t, sk, 2*time.Minute, func(s *skyhookv1.Skyhook) bool {
		return isReady(s) && s.Status.Status == skyhookv1.StatusComplete
	})

	// A 1 MiB value never reaches the operator.
	err := patchNode(ctx, c, sk+"-0", false, map[string]any{nodeState: strings.Repeat("x", 1<<20)})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "may not be more than 262144 bytes") {
		t.Fatalf("a 1 MiB annotation: %v; want the apiserver's refusal", err)
	}

	// From here on: every write to the nodes, every stage pod, the
	// reconciles and their panics.
	w, err := env.Clientset.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: "pool=" + sk})
	if err != nil {
		t.Fatal(err)
	}
	writes := testenv.Tally(t, w, func(ev watch.Event) []string {
		node, ok := ev.Object.(*corev1.Node)
		if !ok || ev.Type != watch.Modified {
			return nil
		}
		return []string{node.Name}
	})
	pods := countStagePods(t, sk)
	reconciles := func() float64 {
		return testenv.MetricSum(t, "controller_runtime_reconcile_total", map[string]string{"controller": "skyhook"})
	}
	panics := func() float64 {
		return testenv.MetricSum(t, "controller_runtime_reconcile_panics_total", map[string]string{"controller": "skyhook"})
	}
	reconcilesBefore, panicsBefore := reconciles(), panics()
	start := time.Now()

	for i, tc := range cases {
		if err := patchNode(ctx, c, fmt.Sprintf("%s-%d", sk, i), tc.label, map[string]any{tc.key: tc.value}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}

	// Reported: the held nodes by the condition, the rest by an event
	// naming the node and the annotation.
	var heldNodes int
	for _, tc := range cases {
		if tc.outcome == held {
			heldNodes++
		}
	}
	waitSkyhook(t, sk, time.Minute, func(s *skyhookv1.Skyhook) bool {
		cond := conditions.Get(s, skyhookv1.NodeStateMalformedCondition)
		return cond != nil && strings.Contains(cond.Message, fmt.Sprintf("cannot be parsed on %d node(s)", heldNodes))
	})
	for i, tc := range cases {
		if tc.outcome == reported {
			waitWarning(t, sk, "MalformedNodeRecord", fmt.Sprintf("node %s-%d: annotation %s holds", sk, i, tc.key))
		}
	}

	// The window: what the operator does with it all, ten seconds on.
	time.Sleep(time.Until(start.Add(10 * time.Second)))
	window := time.Since(start)
	if d := panics() - panicsBefore; d != 0 {
		t.Errorf("%v reconcile panics", d)
	}
	select {
	case err := <-operatorDone:
		t.Fatalf("the operator stopped: %v", err)
	default:
	}
	// A pass per node event and a few more for the status writes: tens;
	// a loop would be thousands.
	if d := reconciles() - reconcilesBefore; d > 150 {
		t.Errorf("%v reconciles in %s", d, window.Round(time.Second))
	}
	counts := writes()
	for i, tc := range cases {
		name := fmt.Sprintf("%s-%d", sk, i)
		// Our write, the operator's repair and its node conditions:
		// a few; a loop would be hundreds.
		if counts[name] > 6 {
			t.Errorf("%s: %d writes to %s in %s", tc.name, counts[name], name, window.Round(time.Second))
		}
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			t.Fatal(err)
		}
		got := node.Annotations[tc.key]
		if tc.label {
			got = node.Labels[tc.key]
		}
		switch tc.outcome {
		case held, reported, ignored:
			if got != tc.value {
				t.Errorf("%s: %s now holds %.80q; want it left as it was", tc.name, tc.key, got)
			}
		case rewritten:
			if got != string(skyhookv1.StatusComplete) {
				t.Errorf("%s: %s now holds %.80q; want complete written back", tc.name, tc.key, got)
			}
		}
	}
	if got := pods(); len(got) > 0 {
		t.Errorf("stage pods ran: %v", got)
	}
	t.Logf("in %s: %v reconciles, node writes %v", window.Round(time.Second), reconciles()-reconcilesBefore, counts)
}

// patchNode merges values into the node's annotations, or its labels.
func patchNode(ctx context.Context, c client.Client, name string, label bool, values map[string]any) error {
	field := "annotations"
	if label {
		field = "labels"
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{field: values}})
	if err != nil {
		return err
	}
	return c.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, client.RawPatch(types.MergePatchType, patch))
}
