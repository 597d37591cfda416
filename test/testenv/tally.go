package testenv

import (
	"maps"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/watch"
)

// Tally counts, by key, the events a watch delivers from now on until the
// test ends: key names an event's key, or reports false to leave it out.
// It returns a function giving the counts so far. A watch sees every
// write, however short-lived, which polling would miss.
func Tally(t testing.TB, w watch.Interface, key func(watch.Event) (string, bool)) func() map[string]int {
	t.Helper()
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	counts := map[string]int{}
	go func() {
		for ev := range w.ResultChan() {
			if k, ok := key(ev); ok {
				mu.Lock()
				counts[k]++
				mu.Unlock()
			}
		}
	}()
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(counts)
	}
}
