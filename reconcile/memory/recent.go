package memory

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Recent remembers writes of a Skyhook's stage pods for RecentWindow: the
// cache shows a deleted pod until its delete event arrives, and lacks a
// created one until its add event does; deleting or creating it again
// would only cost a request (a create, a 409 AlreadyExists). Keys are pod
// UIDs or names, as the caller chooses.
type Recent struct {
	perSkyhook[string, time.Time]
	lastPrune time.Time
}

// RecentWindow is how long a write is remembered; far longer than the
// cache lags.
const RecentWindow = 30 * time.Second

// Left is how long the write of key is still remembered, zero for not.
func (r *Recent) Left(uid types.UID, key string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.m[uid][key]
	if !ok {
		return 0
	}
	return max(0, RecentWindow-time.Since(at))
}

// Has reports whether the write of key is remembered.
func (r *Recent) Has(uid types.UID, key string) bool { return r.Left(uid, key) > 0 }

// Add remembers a write of key now; now and then it sweeps out the writes
// older than the window.
func (r *Recent) Add(uid types.UID, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	r.of(uid)[key] = now
	if now.Sub(r.lastPrune) > RecentWindow {
		prune(r.m, now.Add(-RecentWindow))
		r.lastPrune = now
	}
}

// Drop forgets the write of key: the cache shows it now.
func (r *Recent) Drop(uid types.UID, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m[uid], key)
}

// StageEnds remembers the stage pods whose end was counted: a finished pod
// stays for a pass or two until its outcome is recorded, and must be
// counted once. StageEndWindow is far longer than a finished pod stays.
type StageEnds struct {
	perSkyhook[types.UID, time.Time]
	lastPrune time.Time
}

// StageEndWindow is how long a counted end is remembered.
const StageEndWindow = time.Hour

// First reports whether the end of pod is seen for the first time, and
// remembers it.
func (s *StageEnds) First(uid, pod types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := s.of(uid)
	if _, ok := seen[pod]; ok {
		return false
	}
	now := time.Now()
	seen[pod] = now
	if now.Sub(s.lastPrune) > StageEndWindow/4 { // a sweep now and then, not one per pod
		prune(s.m, now.Add(-StageEndWindow))
		s.lastPrune = now
	}
	return true
}

// prune deletes the entries older than before, and the Skyhooks left with
// none.
func prune[K comparable](m map[types.UID]map[K]time.Time, before time.Time) {
	for uid, inner := range m {
		for k, at := range inner {
			if at.Before(before) {
				delete(inner, k)
			}
		}
		if len(inner) == 0 {
			delete(m, uid)
		}
	}
}
