// Package memory is what the Skyhook reconciler remembers between passes.
// The cache a pass reads lags the operator's own writes by a moment;
// without this memory a pass could start more nodes than the budget
// allows, write a record or delete a pod twice, or judge a batch twice. So
// it keeps its own writes until the cache shows them (the nodes it started,
// the records and node conditions it wrote, the stage pods it created and
// deleted, when it last wrote each status), what it judged (each
// compartment's batch state, the stage ends it counted), and what it read
// (the records it parsed, and each Skyhook's view of its fleet with the
// changes the watches noted since).
//
// Every store is kept per rollout (a Skyhook or a NodeWright: by its UID,
// or by its skyhookv1.RolloutRef), and one call forgets all of them
// (Forget): when the rollout's object is deleted, or replaced by another of
// the same kind and name (Track). Held says what is left, for the operator's memory metric
// and for the test that checks nothing outlives its Skyhook. Every store is
// safe for the pass's pool of goroutines.
package memory

import (
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/fleet"
)

// Memory is the reconciler's memory; W is what a view keeps of a node
// between passes (the reconciler's own per-node work). The zero value is
// ready to use.
type Memory[W any] struct {
	// Started are the nodes a Skyhook started that the cache does not show
	// started yet.
	Started Started
	// StatusWrites are when each Skyhook's status was last written.
	StatusWrites StatusWrites
	// RolloutVersions are the rollouts' resourceVersions after this
	// operator's writes to them.
	RolloutVersions RolloutVersions
	// Written are the node records and node conditions last written.
	Written Written
	// NodeVersions are the nodes' resourceVersions after those writes.
	NodeVersions NodeVersions
	// Batches are each compartment's batch state as last judged.
	Batches Batches
	// Records are the node records as last parsed.
	Records Records
	// Deleted are the stage pods deleted lately, by pod UID.
	Deleted Recent
	// Created are the stage pods created lately, by pod name.
	Created Recent
	// StageEnds are the stage pods whose end was counted, by pod UID.
	StageEnds StageEnds
	// Changes are the nodes the watches noted changed since each
	// rollout's last pass.
	Changes fleet.Changes[skyhookv1.RolloutRef]

	// views are each rollout's view of its fleet.
	views views[W]

	mu sync.Mutex
	// uids is the UID last seen under each rollout's kind and name.
	uids map[skyhookv1.RolloutRef]types.UID
}

// Track notes the rollout a reconcile handles. Another object known under
// the same kind and name was deleted meanwhile (its delete and this create
// reached the reconciler as one request): what is remembered of it is
// forgotten.
func (m *Memory[W]) Track(uid types.UID, rollout skyhookv1.RolloutRef) {
	m.mu.Lock()
	old, known := m.uids[rollout]
	if m.uids == nil {
		m.uids = map[skyhookv1.RolloutRef]types.UID{}
	}
	m.uids[rollout] = uid
	m.mu.Unlock()
	if known && old != uid {
		m.forgetUID(old)
		m.views.drop(rollout)
	}
}

// Forget drops everything remembered of a rollout: every store keyed by
// its UID and every one keyed by its kind and name. An empty uid stands for
// the UID last tracked under them (a reconcile that finds the object gone
// knows only its name).
func (m *Memory[W]) Forget(uid types.UID, rollout skyhookv1.RolloutRef) {
	m.mu.Lock()
	tracked := m.uids[rollout]
	delete(m.uids, rollout)
	m.mu.Unlock()
	for _, u := range []types.UID{uid, tracked} {
		if u != "" {
			m.forgetUID(u)
		}
	}
	m.views.drop(rollout)
	m.Changes.Forget(rollout)
}

func (m *Memory[W]) forgetUID(uid types.UID) {
	for _, s := range m.byUID() {
		s.store.forget(uid)
	}
}

// byUIDStore is a store kept by Skyhook UID.
type byUIDStore interface {
	forget(uid types.UID)
	// sizes are the entries per Skyhook UID held.
	sizes() map[types.UID]int
}

type namedStore struct {
	name  string
	store byUIDStore
}

func (m *Memory[W]) byUID() []namedStore {
	return []namedStore{{"started", &m.Started}, {"statusWrites", &m.StatusWrites}, {"rolloutVersions", &m.RolloutVersions}, {"written", &m.Written}, {"nodeVersions", &m.NodeVersions}, {"batches", &m.Batches},
		{"records", &m.Records}, {"deleted", &m.Deleted}, {"created", &m.Created}, {"stageEnds", &m.StageEnds}}
}

// Holding is what one store holds for one rollout: Entries may be 0 when
// the store keeps an empty place for it.
type Holding struct {
	// Kind and Name are the rollout's; Kind is empty, and Name its UID,
	// when the store knows the rollout by a UID not tracked (which Forget
	// would then miss).
	Kind, Name string
	Store      string
	Entries    int
}

// Held lists what every store holds, per rollout, sorted.
func (m *Memory[W]) Held() []Holding {
	m.mu.Lock()
	refs := make(map[types.UID]skyhookv1.RolloutRef, len(m.uids))
	var out []Holding
	for ref, uid := range m.uids {
		refs[uid] = ref
		out = append(out, holding(ref, "names", 1))
	}
	m.mu.Unlock()
	for _, s := range m.byUID() {
		for uid, n := range s.store.sizes() {
			h := Holding{Name: string(uid), Store: s.name, Entries: n}
			if ref, ok := refs[uid]; ok {
				h = holding(ref, s.name, n)
			}
			out = append(out, h)
		}
	}
	for ref, n := range m.views.sizes() {
		out = append(out, holding(ref, "views", n))
	}
	for ref, n := range m.Changes.Sizes() {
		out = append(out, holding(ref, "changes", n))
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind || a.Name != b.Name {
			return a.Kind+"/"+a.Name < b.Kind+"/"+b.Name
		}
		return a.Store < b.Store
	})
	return out
}

func holding(ref skyhookv1.RolloutRef, store string, entries int) Holding {
	return Holding{Kind: ref.Kind.Kind, Name: ref.Name, Store: store, Entries: entries}
}

// perSkyhook is a map per Skyhook UID, the shape of every store kept by
// UID: each embeds it, and with it forget and sizes.
type perSkyhook[K comparable, V any] struct {
	mu sync.Mutex
	m  map[types.UID]map[K]V
}

// of is the Skyhook's map, made when missing; the caller holds mu.
func (p *perSkyhook[K, V]) of(uid types.UID) map[K]V {
	if p.m == nil {
		p.m = map[types.UID]map[K]V{}
	}
	inner := p.m[uid]
	if inner == nil {
		inner = map[K]V{}
		p.m[uid] = inner
	}
	return inner
}

func (p *perSkyhook[K, V]) forget(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, uid)
}

func (p *perSkyhook[K, V]) sizes() map[types.UID]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[types.UID]int, len(p.m))
	for uid, inner := range p.m {
		out[uid] = len(inner)
	}
	return out
}
