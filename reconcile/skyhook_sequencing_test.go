package reconcile_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// sequencing: all holds the Skyhooks after it on every node, also the nodes
// it does not select, until it is complete on all of its own; the default
// (node) would have let the second Skyhook start on seq-2 at once. The
// Skyhook held says waiting meanwhile.
func TestSequencingAllHoldsEveryNode(t *testing.T) {
	createNodes(t,
		simnode.Node{Name: "seq-0", Labels: map[string]string{"pool": "seq", "role": "first"}},
		simnode.Node{Name: "seq-1", Labels: map[string]string{"pool": "seq", "role": "first"}},
		simnode.Node{Name: "seq-2", Labels: map[string]string{"pool": "seq", "role": "second"}})
	c := k8sClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := env.Clientset.CoreV1().Pods(operatorNamespace).Watch(ctx, metav1.ListOptions{LabelSelector: stagepod.SkyhookLabel + " in (seq-first,seq-second)"})
	if err != nil {
		t.Fatal(err)
	}
	var order []string // the Skyhook of each stage pod, in creation order (one watch)
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
				order = append(order, pod.Labels[stagepod.SkyhookLabel])
			}
		}
	}()
	one := 1
	slow := pkg("1.0.0", "ghcr.io/x/slow", nil)
	slow.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1s"}}
	first := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "seq-first"},
		Spec: skyhookv1.SkyhookSpec{
			Priority: 1, Sequencing: skyhookv1.SequencingAll,
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"pool": "seq", "role": "first"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: &one},
			Packages:           skyhookv1.Packages{"slow": slow},
		},
	}
	second := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "seq-second"},
		Spec: skyhookv1.SkyhookSpec{
			Priority:     2,
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "seq", "role": "second"}},
			Packages:     skyhookv1.Packages{"quick": pkg("1.0.0", "ghcr.io/x/quick", nil)},
		},
	}
	for _, sk := range []*skyhookv1.Skyhook{first, second} {
		if err := c.Create(ctx, sk); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	}
	// Held everywhere, the second Skyhook says waiting, as NodeWright's.
	waitSkyhook(t, "seq-second", time.Minute, func(s *skyhookv1.Skyhook) bool { return s.Status.Status == skyhookv1.StatusWaiting })
	if got := waitSkyhook(t, "seq-first", time.Minute, isReady); got.Spec.Sequencing != skyhookv1.SequencingAll {
		t.Fatalf("sequencing %q stored", got.Spec.Sequencing)
	}
	waitSkyhook(t, "seq-second", time.Minute, isReady)
	cancel()
	<-collected
	lastFirst, firstSecond := -1, -1
	for i, sk := range order {
		if sk == "seq-first" {
			lastFirst = i
		} else if firstSecond < 0 {
			firstSecond = i
		}
	}
	if lastFirst < 0 || firstSecond < 0 || firstSecond < lastFirst {
		t.Errorf("stage pods in order %v: seq-second started before seq-first was done everywhere", order)
	}
}

// serial runs one package at a time on a node: never two of its packages
// in progress there at once, though they do not depend on each other.
func TestSerialRunsOnePackageAtATime(t *testing.T) {
	createNodes(t, simnode.Numbered("serial", 1, map[string]string{"pool": "serial"})...)
	c := k8sClient(t)
	ctx := context.Background()
	history := recordHistory(t, "serial-0", "serial")
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "serial"},
		Spec: skyhookv1.SkyhookSpec{
			Serial:       true,
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "serial"}},
			Packages: skyhookv1.Packages{
				"alpha": pkg("1.0.0", "ghcr.io/x/alpha", nil),
				"beta":  pkg("1.0.0", "ghcr.io/x/beta", nil),
				"gamma": pkg("1.0.0", "ghcr.io/x/gamma", nil),
			},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "serial", time.Minute, isReady)
	records := history()
	for _, s := range records {
		var running []string
		for key, e := range s {
			if e.State == skyhookv1.StateInProgress {
				running = append(running, key)
			}
		}
		if len(running) > 1 {
			t.Errorf("%v in progress at once on a serial Skyhook: %v", running, s)
		}
	}
	if len(records) == 0 || len(records[len(records)-1]) != 3 {
		t.Fatalf("records %v, want all three packages recorded", records)
	}
}
