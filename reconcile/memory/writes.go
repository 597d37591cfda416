package memory

import (
	"crypto/sha256"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Started remembers the nodes a Skyhook started until the cache shows
// them, so that a pass reading a cache that lags its own writes does not
// start more nodes than the budget allows.
type Started struct{ perSkyhook[string, struct{}] }

func (s *Started) Add(uid types.UID, node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.of(uid)[node] = struct{}{}
}

func (s *Started) Has(uid types.UID, node string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[uid][node]
	return ok
}

func (s *Started) Remove(uid types.UID, node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m[uid], node)
}

// Written remembers the last patch written per Skyhook and key (a node's
// record by the node's UID, so a node replaced under the same name starts
// afresh; its conditions by a key of their own), as its SHA-256: the
// patches themselves (a few KiB a node) would cost tens of MiB at 10,000
// nodes.
type Written struct {
	perSkyhook[string, [sha256.Size]byte]
}

// Same reports whether patch is what was last written for key.
func (w *Written) Same(uid types.UID, key string, patch []byte) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.m[uid][key]
	return ok && last == sha256.Sum256(patch)
}

// Record notes patch written for key.
func (w *Written) Record(uid types.UID, key string, patch []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.of(uid)[key] = sha256.Sum256(patch)
}

// NodeVersions remembers, per Skyhook and node UID, the resourceVersion
// the node had after this operator's last write of its record: a cached
// node older than that has not caught up with the write yet.
type NodeVersions struct {
	perSkyhook[string, string]
}

// Record notes the node's resourceVersion after a write.
func (v *NodeVersions) Record(uid types.UID, node types.UID, resourceVersion string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.of(uid)[string(node)] = resourceVersion
}

// Behind reports whether the node, as cached, is older than the Skyhook's
// last write to it. A resourceVersion that is not an apiserver's (as
// resourceversion.CompareResourceVersion reads them) is never behind.
func (v *NodeVersions) Behind(uid types.UID, node *corev1.Node) bool {
	v.mu.Lock()
	written, ok := v.m[uid][string(node.UID)]
	v.mu.Unlock()
	return ok && olderThan(node.ResourceVersion, written)
}

// olderThan reports whether a cached resourceVersion comes before the one
// a write returned; one that is not an apiserver's never does.
func olderThan(cached, written string) bool {
	cmp, err := resourceversion.CompareResourceVersion(cached, written)
	return err == nil && cmp < 0
}

// RolloutVersions remembers, per rollout, the newest resourceVersion its
// object had after one of this operator's writes to it. A pass that read a
// cached copy older than that would patch the status against a stale base:
// the merge patch leaves out what the stale copy and the new status agree
// on, so a value the newer write set (a started node in nodePriority, an
// in-progress count) would stay on the object.
type RolloutVersions struct {
	perSkyhook[struct{}, string]
}

// Record notes the object's resourceVersion after a write; an older one
// than already noted (a response overtaken by a later write's) is ignored.
func (v *RolloutVersions) Record(uid types.UID, resourceVersion string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	last, ok := v.m[uid][struct{}{}]
	if ok {
		if cmp, err := resourceversion.CompareResourceVersion(resourceVersion, last); err != nil || cmp <= 0 {
			return
		}
	}
	v.of(uid)[struct{}{}] = resourceVersion
}

// Behind reports whether the cached object is older than this operator's
// last write to it. A resourceVersion that is not an apiserver's is never
// behind.
func (v *RolloutVersions) Behind(uid types.UID, resourceVersion string) bool {
	v.mu.Lock()
	written, ok := v.m[uid][struct{}{}]
	v.mu.Unlock()
	return ok && olderThan(resourceVersion, written)
}

// StatusInterval is the least time between two status writes that only
// move progress counters: at fleet scale every node finishing would
// otherwise cost a write of the Skyhook.
const StatusInterval = time.Second

// StatusWrites remembers when each Skyhook's status was last written.
type StatusWrites struct {
	perSkyhook[struct{}, time.Time]
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
	w.mu.Lock()
	defer w.mu.Unlock()
	wait := StatusInterval - time.Since(w.m[after.UID][struct{}{}])
	if wait <= 0 {
		return 0, false
	}
	return wait, true
}

// Wrote notes a status write now.
func (w *StatusWrites) Wrote(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.of(uid)[struct{}{}] = time.Now()
}

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
