package reconcile_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/reconcile/report"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// An install of one package (apply and config in one run) writes its node
// three times, every key and node condition of the rollout included: the
// start (record and conditions in one request, through the node's status),
// config in progress, and the end (record and conditions again in one).
func TestInstallWritesItsNodeThreeTimes(t *testing.T) {
	writes := rolloutWritesOn(t, "writes3-0")
	oneNodeRolloutOf(t, "writes3", func(tuning *skyhookv1.Package) {
		tuning.ConfigMap = map[string]string{"tuning.conf": "a"}
		tuning.Env = []corev1.EnvVar{{Name: cluster.SimDurationEnv, Value: "2s"}} // each stage long enough to be seen
	})
	waitSkyhook(t, "writes3", time.Minute, isReady)
	node := getNode(t, "writes3-0")
	ref := skyhookv1.Skyhooks.Named("writes3")
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
}

// rolloutWritesOn records, from now on, each change to the node that
// touches a key of this project's (annotations, labels and node conditions
// under skyhook.nvidia.com/), as the keys it changed: one entry per write
// (a write that changes nothing makes no event).
func rolloutWritesOn(t *testing.T, node string) func() []string {
	t.Helper()
	before := map[string]string{} // Collect runs keep event after event
	return testenv.Collect(t, watchNode(t, node), func(ev watch.Event) []string {
		n, ok := ev.Object.(*corev1.Node)
		if !ok || ev.Type == watch.Deleted {
			return nil
		}
		now := projectKeys(n)
		changed := changedKeys(before, now)
		before = now
		if ev.Type != watch.Modified || changed == "" {
			return nil
		}
		return []string{changed}
	})
}

// projectKeys are the node's annotations, labels and conditions under
// skyhook.nvidia.com/, by kind and key (a condition by its status and
// reason: its heartbeat time is not a change of standing).
func projectKeys(n *corev1.Node) map[string]string {
	out := map[string]string{}
	for kind, m := range map[string]map[string]string{"annotation ": n.Annotations, "label ": n.Labels} {
		for k, v := range m {
			if strings.HasPrefix(k, skyhookv1.MetadataPrefix+"/") {
				out[kind+k] = v
			}
		}
	}
	for _, c := range n.Status.Conditions {
		if strings.HasPrefix(string(c.Type), skyhookv1.MetadataPrefix+"/") {
			out["condition "+string(c.Type)] = string(c.Status) + " " + c.Reason
		}
	}
	return out
}

// changedKeys names the keys that differ between two projectKeys, space
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
