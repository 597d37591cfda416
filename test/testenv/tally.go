package testenv

import (
	"maps"
	"slices"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/watch"
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
