package testenv

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Tally counts, by key, the events a watch delivers from now on until the
// test ends: keys names the keys an event counts under (none leaves it
// out; a stage-run pod counts once for each of its stages).
// It returns a function giving the counts so far. A watch sees every
// write, however short-lived, which polling would miss.
func Tally(t testing.TB, w watch.Interface, keys func(watch.Event) []string) func() map[string]int {
	t.Helper()
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	counts := map[string]int{}
	go func() {
		for ev := range w.ResultChan() {
			mu.Lock()
			for _, k := range keys(ev) {
				counts[k]++
			}
			mu.Unlock()
		}
	}()
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(counts)
	}
}

// Collect keeps, in order, what keep makes of each event a watch delivers
// from now on until the test ends (nothing for an event it makes nothing
// of). keep runs on one goroutine, event after event, so it may carry
// state from one event to the next. It returns a function giving what was
// kept so far.
func Collect[T any](t testing.TB, w watch.Interface, keep func(watch.Event) []T) func() []T {
	t.Helper()
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	var kept []T
	go func() {
		for ev := range w.ResultChan() {
			got := keep(ev)
			mu.Lock()
			kept = append(kept, got...)
			mu.Unlock()
		}
	}()
	return func() []T {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(kept)
	}
}

// PodsCreated keeps, in order, what name makes of each pod created in the
// namespace from now on. The watch starts from a list's resourceVersion: a
// watch started from none first replays every pod there is as added (a
// finished stage pod not yet deleted would read as created now).
func PodsCreated(t testing.TB, cs kubernetes.Interface, namespace string, name func(*corev1.Pod) []string) func() []string {
	t.Helper()
	pods := cs.CoreV1().Pods(namespace)
	list, err := pods.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(context.Background(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	return Collect(t, w, func(ev watch.Event) []string {
		if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
			return name(pod)
		}
		return nil
	})
}
