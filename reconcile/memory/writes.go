package memory

import (
	"crypto/sha256"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Started remembers the nodes a Skyhook started until the cache shows
// them, so that a pass reading a cache that lags its own writes does not
// start more nodes than the budget allows.
type Started struct{ p perSkyhook[string, struct{}] }

func (s *Started) Add(uid types.UID, node string) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	s.p.of(uid)[node] = struct{}{}
}

func (s *Started) Has(uid types.UID, node string) bool {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	_, ok := s.p.m[uid][node]
	return ok
}

func (s *Started) Remove(uid types.UID, node string) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	delete(s.p.m[uid], node)
}

func (s *Started) forget(uid types.UID)     { s.p.forget(uid) }
func (s *Started) sizes() map[types.UID]int { return s.p.sizes() }

// Written remembers the last patch written per Skyhook and key (a node's
// record by the node's UID, so a node replaced under the same name starts
// afresh; its conditions by a key of their own), as its SHA-256: the
// patches themselves (a few KiB a node) would cost tens of MiB at 10,000
// nodes.
type Written struct {
	p perSkyhook[string, [sha256.Size]byte]
}

// Same reports whether patch is what was last written for key.
func (w *Written) Same(uid types.UID, key string, patch []byte) bool {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	last, ok := w.p.m[uid][key]
	return ok && last == sha256.Sum256(patch)
}

// Record notes patch written for key.
func (w *Written) Record(uid types.UID, key string, patch []byte) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	w.p.of(uid)[key] = sha256.Sum256(patch)
}

func (w *Written) forget(uid types.UID)     { w.p.forget(uid) }
func (w *Written) sizes() map[types.UID]int { return w.p.sizes() }

// StatusInterval is the least time between two status writes that only
// move progress counters: at fleet scale every node finishing would
// otherwise cost a write of the Skyhook.
const StatusInterval = time.Second

// StatusWrites remembers when each Skyhook's status was last written.
type StatusWrites struct {
	p perSkyhook[struct{}, time.Time]
}

// Hold reports whether the change from before to after can wait, and how
// long: only progress counters and messages moved, and the last write was
// less than StatusInterval ago. Transitions (Ready, Stalled, the summary
// status, finalizers, observedGeneration) are written at once.
func (w *StatusWrites) Hold(before, after *skyhookv1.Skyhook) (time.Duration, bool) {
	if !equality.Semantic.DeepEqual(before.ObjectMeta.Finalizers, after.ObjectMeta.Finalizers) ||
		!equality.Semantic.DeepEqual(withoutCounters(before.Status), withoutCounters(after.Status)) {
		return 0, false
	}
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	wait := StatusInterval - time.Since(w.p.m[after.UID][struct{}{}])
	if wait <= 0 {
		return 0, false
	}
	return wait, true
}

// Wrote notes a status write now.
func (w *StatusWrites) Wrote(uid types.UID) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	w.p.of(uid)[struct{}{}] = time.Now()
}

func (w *StatusWrites) forget(uid types.UID)     { w.p.forget(uid) }
func (w *StatusWrites) sizes() map[types.UID]int { return w.p.sizes() }

// withoutCounters is the status with the fields that move with every node
// blanked out: the counters and the per-node maps (blanked before the copy,
// which then stays small).
func withoutCounters(s skyhookv1.SkyhookStatus) skyhookv1.SkyhookStatus {
	s.NodeState, s.NodeStatus, s.NodeBootIDs, s.NodePriority, s.NodeOrderOffset = nil, nil, nil, nil, 0
	s.CompartmentStatuses, s.OmittedNodes = nil, nil
	s = *s.DeepCopy()
	s.CompleteNodes, s.NodesInProgress, s.NodesNeedingAttention = "", 0, nil
	for i := range s.Compartments {
		s.Compartments[i].Nodes, s.Compartments[i].Complete, s.Compartments[i].InProgress = 0, 0, 0
	}
	for i := range s.Conditions {
		s.Conditions[i].Message, s.Conditions[i].LastTransitionTime = "", metav1.Time{}
	}
	return s
}
