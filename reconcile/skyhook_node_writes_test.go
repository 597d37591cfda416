package reconcile_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/report"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// An install of one package (apply and config in one run) writes its node
// three times, every key and node condition of the rollout included: the
// start (record and conditions in one request, through the node's status),
// config in progress, and the end (record and conditions again in one).
// For either kind, each under its own prefix.
func TestInstallWritesItsNodeThreeTimes(t *testing.T) {
	eachKind(t, func(t *testing.T, k kindCase) {
		name := k.name("writes3")
		createNodes(t, simnode.Numbered(name, 1, map[string]string{"pool": name})...)
		writes := rolloutWritesOn(t, name+"-0", k.Prefix)
		tuning := pkg("1.0.0", "ghcr.io/x/tuning", nil)
		tuning.ConfigMap = map[string]string{"tuning.conf": "a"}
		tuning.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "2s"}} // each stage long enough to be seen
		k.create(t, "writes3", skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}},
			Packages:     skyhookv1.Packages{"tuning": tuning},
		})
		k.wait(t, "writes3", time.Minute, isReady)
		node := getNode(t, name+"-0")
		ref := k.ref("writes3")
		for _, c := range report.NodeConditions(ref, skyhookv1.StatusComplete, nil) {
			if got := nodeCondition(node, string(c.Type)); got == nil || got.Status != c.Status || got.Reason != c.Reason {
				t.Errorf("node condition %s: %+v, want %s %s", c.Type, got, c.Status, c.Reason)
			}
		}
		if node.Labels[ref.StatusKey()] != string(skyhookv1.StatusComplete) {
			t.Errorf("status label %q, want complete", node.Labels[ref.StatusKey()])
		}
		if got := writes(); len(got) != 3 {
			t.Errorf("%d writes of the rollout's keys to the node, want 3:\n%s", len(got), strings.Join(got, "\n"))
		}
	})
}

// rolloutWritesOn records, from now on, each change to the node that
// touches a key under prefix (annotations, labels and node conditions), as
// the keys it changed: one entry per write (a write that changes nothing
// makes no event).
func rolloutWritesOn(t *testing.T, node, prefix string) func() []string {
	t.Helper()
	before := map[string]string{} // Collect runs keep event after event
	return testenv.Collect(t, watchNode(t, node), func(ev watch.Event) []string {
		n, ok := ev.Object.(*corev1.Node)
		if !ok || ev.Type == watch.Deleted {
			return nil
		}
		now := keysUnder(n, prefix)
		changed := changedKeys(before, now)
		before = now
		if ev.Type != watch.Modified || changed == "" {
			return nil
		}
		return []string{changed}
	})
}

// keysUnder are the node's annotations, labels and conditions under
// prefix, by kind and key (a condition by its status and reason: its
// heartbeat time is not a change of standing).
func keysUnder(n *corev1.Node, prefix string) map[string]string {
	out := map[string]string{}
	for kind, m := range map[string]map[string]string{"annotation ": n.Annotations, "label ": n.Labels} {
		for k, v := range m {
			if strings.HasPrefix(k, prefix+"/") {
				out[kind+k] = v
			}
		}
	}
	for _, c := range n.Status.Conditions {
		if strings.HasPrefix(string(c.Type), prefix+"/") {
			out["condition "+string(c.Type)] = string(c.Status) + " " + c.Reason
		}
	}
	return out
}

// changedKeys names the keys that differ between two keysUnder, space
// separated, sorted.
func changedKeys(before, now map[string]string) string {
	var changed []string
	for k, v := range before {
		if was, ok := now[k]; !ok || was != v {
			changed = append(changed, k)
		}
	}
	for k := range now {
		if _, ok := before[k]; !ok {
			changed = append(changed, k)
		}
	}
	slices.Sort(changed)
	return strings.Join(changed, ", ")
}
