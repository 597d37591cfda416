package reconcile

import (
	"crypto/sha256"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/api/nodestate"
)

// The operator's memory of its own writes, kept between passes. The cache
// a pass reads lags the operator's writes by a moment; without this memory
// a pass could start more nodes than the budget allows, write a record or
// delete a pod twice, or judge a batch twice. Each store is keyed by the
// Skyhook's UID and is safe for the pass's pool of goroutines; all are
// forgotten when the Skyhook is deleted.

// startedNodes remembers the nodes a Skyhook started until the cache shows
// them, so that a pass reading a cache that lags its own writes does not
// start more nodes than the budget allows.
type startedNodes struct {
	mu    sync.Mutex
	nodes map[types.UID]map[string]bool
}

func (s *startedNodes) add(uid types.UID, node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodes == nil {
		s.nodes = map[types.UID]map[string]bool{}
	}
	if s.nodes[uid] == nil {
		s.nodes[uid] = map[string]bool{}
	}
	s.nodes[uid][node] = true
}

func (s *startedNodes) has(uid types.UID, node string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodes[uid][node]
}

func (s *startedNodes) remove(uid types.UID, node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.nodes[uid], node)
}

func (s *startedNodes) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.nodes, uid)
}

// statusInterval is the least time between two status writes that only
// move progress counters: at fleet scale every node finishing would
// otherwise cost a write of the Skyhook.
const statusInterval = time.Second

// statusWrites remembers when each Skyhook's status was last written.
type statusWrites struct {
	mu   sync.Mutex
	last map[types.UID]time.Time
}

// hold reports whether the change from before to after can wait, and how
// long: only progress counters and messages moved, and the last write was
// less than statusInterval ago. Transitions (Ready, Stalled, the summary
// status, finalizers, observedGeneration) are written at once.
func (w *statusWrites) hold(before, after *skyhookv1.Skyhook) (time.Duration, bool) {
	if !equality.Semantic.DeepEqual(before.ObjectMeta.Finalizers, after.ObjectMeta.Finalizers) ||
		!equality.Semantic.DeepEqual(withoutCounters(before.Status), withoutCounters(after.Status)) {
		return 0, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	wait := statusInterval - time.Since(w.last[after.UID])
	if wait <= 0 {
		return 0, false
	}
	return wait, true
}

func (w *statusWrites) wrote(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = map[types.UID]time.Time{}
	}
	w.last[uid] = time.Now()
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

// writtenRecords remembers the last node record patch written per Skyhook
// and node (by UID, so a node replaced under the same name starts afresh),
// as its SHA-256: the patches themselves (a few KiB a node) would cost tens
// of MiB at 10,000 nodes.
type writtenRecords struct {
	mu    sync.Mutex
	patch map[types.UID]map[string][sha256.Size]byte
}

func (w *writtenRecords) same(uid types.UID, node string, patch []byte) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.patch[uid][node]
	return ok && last == sha256.Sum256(patch)
}

func (w *writtenRecords) record(uid types.UID, node string, patch []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.patch == nil {
		w.patch = map[types.UID]map[string][sha256.Size]byte{}
	}
	if w.patch[uid] == nil {
		w.patch[uid] = map[string][sha256.Size]byte{}
	}
	w.patch[uid][node] = sha256.Sum256(patch)
}

func (w *writtenRecords) forget(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.patch, uid)
}

// recentWrites remembers the stage pods this operator deleted (by UID) or
// created (by name) lately: the cache shows a deleted pod until its delete
// event arrives, and lacks a created one until its add event does; deleting
// or creating it again would only cost a request (a create, a 409
// AlreadyExists).
type recentWrites struct {
	mu        sync.Mutex
	at        map[string]time.Time
	lastPrune time.Time
}

// recentWriteWindow is how long a write is remembered; far longer than
// the cache lags.
const recentWriteWindow = 30 * time.Second

// left is how long the write of key is still remembered, zero for not.
func (d *recentWrites) left(key string) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.at[key]
	if !ok {
		return 0
	}
	return max(0, recentWriteWindow-time.Since(at))
}

func (d *recentWrites) has(key string) bool { return d.left(key) > 0 }

func (d *recentWrites) add(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	if d.at == nil {
		d.at = map[string]time.Time{}
	}
	d.at[key] = now
	if now.Sub(d.lastPrune) > recentWriteWindow {
		for k, at := range d.at {
			if now.Sub(at) >= recentWriteWindow {
				delete(d.at, k)
			}
		}
		d.lastPrune = now
	}
}

// forget drops the write of key: the cache shows it now.
func (d *recentWrites) forget(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.at, key)
}

// parsedRecord is a node's record of one Skyhook, parsed from the node's
// annotations at one resourceVersion.
type parsedRecord struct {
	uid             types.UID
	resourceVersion string
	record          nodestate.Record
	err             error
	// problems are the annotations of the record someone else wrote
	// that read as none (nodestate.Problems, interrupt.Problem).
	problems []string
	// fresh is set when this pass parsed the record (the node changed).
	fresh bool
}

// parsedRecords keeps the records of the last pass per Skyhook, so that a
// pass over thousands of nodes parses only the nodes that changed since
// (the JSON of the nodeState annotation is the costly part of a pass).
type parsedRecords struct {
	mu    sync.Mutex
	bySky map[types.UID]map[string]parsedRecord
}

// read returns the nodes' records of the Skyhook, in the nodes' order. The
// records are shared with later passes: callers copy before changing them.
//
// A full read (every selected node) keeps only the nodes read; a partial
// one (the nodes a pass visits) keeps the others as they were, less the
// gone ones.
func (p *parsedRecords) read(sk *skyhookv1.Skyhook, nodes []corev1.Node, full bool, gone []string) []parsedRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	last := p.bySky[sk.UID]
	now := make(map[string]parsedRecord, len(nodes))
	if !full && last != nil {
		now = last
		for _, name := range gone {
			delete(now, name)
		}
	}
	out := make([]parsedRecord, len(nodes))
	for i := range nodes {
		node := &nodes[i]
		rec, ok := last[node.Name]
		if !ok || rec.uid != node.UID || rec.resourceVersion != node.ResourceVersion {
			rec = parsedRecord{uid: node.UID, resourceVersion: node.ResourceVersion}
			rec.record.State, rec.err = nodestate.Read(node, sk.Name)
			rec.record.Config = nodestate.ReadConfig(node, sk.Name)
			rec.record.Batch = nodestate.ReadBatch(node, sk.Name)
			rec.problems = nodestate.Problems(node, sk.Name)
			if p := interrupt.Problem(node, sk.Name); p != "" {
				rec.problems = append(rec.problems, p)
			}
			out[i] = rec
			out[i].fresh = true
		} else {
			out[i] = rec
		}
		now[node.Name] = rec
	}
	if p.bySky == nil {
		p.bySky = map[types.UID]map[string]parsedRecord{}
	}
	p.bySky[sk.UID] = now
	return out
}

func (p *parsedRecords) forget(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.bySky, uid)
}

// batchStates holds each Skyhook's compartment batch state between passes.
// The status carries it too, but the cached Skyhook can lag this
// operator's own status writes, and judging a batch twice would count its
// failures twice; the status is read only when the process has nothing
// newer (after a restart).
type batchStates struct {
	mu     sync.Mutex
	states map[types.UID]map[string]skyhookv1.CompartmentStatus
}

func (b *batchStates) load(sk *skyhookv1.Skyhook) map[string]skyhookv1.CompartmentStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]skyhookv1.CompartmentStatus{}
	for _, st := range sk.Status.Compartments {
		out[st.Name] = st
	}
	for name, st := range b.states[sk.UID] {
		if st.Batch >= out[name].Batch {
			out[name] = st
		}
	}
	return out
}

func (b *batchStates) store(uid types.UID, statuses []skyhookv1.CompartmentStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.states == nil {
		b.states = map[types.UID]map[string]skyhookv1.CompartmentStatus{}
	}
	m := map[string]skyhookv1.CompartmentStatus{}
	for _, st := range statuses {
		m[st.Name] = st
	}
	b.states[uid] = m
}

func (b *batchStates) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.states, uid)
}

// stageEnds remembers the stage pods whose end was counted: a finished pod
// stays for a pass or two until its outcome is recorded, and must be
// counted once. An hour is far longer than a finished pod stays.
type stageEnds struct {
	mu        sync.Mutex
	seen      map[types.UID]time.Time
	lastPrune time.Time
}

const stageEndWindow = time.Hour

// first reports whether uid is seen for the first time, and remembers it.
func (s *stageEnds) first(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.seen == nil {
		s.seen = map[types.UID]time.Time{}
	}
	if _, ok := s.seen[uid]; ok {
		return false
	}
	s.seen[uid] = now
	if now.Sub(s.lastPrune) > stageEndWindow/4 { // a sweep now and then, not one per pod
		for k, at := range s.seen {
			if now.Sub(at) >= stageEndWindow {
				delete(s.seen, k)
			}
		}
		s.lastPrune = now
	}
	return true
}
