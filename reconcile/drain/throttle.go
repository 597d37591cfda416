package drain

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// RefusalInterval is how long a pod a PodDisruptionBudget refused is not
// asked again, as NodeWright v0.20 retries such evictions: the budget
// changes when other pods become healthy, not faster than that, and every
// pass of a large fleet asking again would load the API server for
// nothing.
const RefusalInterval = 30 * time.Second

// Throttle remembers, by pod UID, the evictions a PodDisruptionBudget
// refused in the last RefusalInterval and the API server's words. It is
// held in memory only (a restart asks again) and forgets on its own; a
// nil Throttle remembers nothing.
type Throttle struct {
	mu      sync.Mutex
	now     func() time.Time
	refused map[types.UID]refusal
}

type refusal struct {
	at     time.Time
	detail string
}

// NewThrottle is an empty Throttle.
func NewThrottle() *Throttle { return &Throttle{now: time.Now, refused: map[types.UID]refusal{}} }

// Refused reports whether a budget refused the pod's eviction lately, and
// what the API server said.
func (t *Throttle) Refused(pod types.UID) (string, bool) {
	if t == nil {
		return "", false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.refused[pod]
	if !ok || t.now().Sub(r.at) >= RefusalInterval {
		return "", false
	}
	return r.detail, true
}

// Note remembers a refusal, and forgets the ones older than the interval.
func (t *Throttle) Note(pod types.UID, detail string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for uid, r := range t.refused {
		if now.Sub(r.at) >= RefusalInterval {
			delete(t.refused, uid)
		}
	}
	t.refused[pod] = refusal{at: now, detail: detail}
}
