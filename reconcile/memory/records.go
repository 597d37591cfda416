package memory

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
)

// Parsed is a node's record of one Skyhook, parsed from the node's
// annotations at one resourceVersion.
type Parsed struct {
	UID             types.UID
	ResourceVersion string
	Record          nodestate.Record
	// Err says why the nodeState annotation cannot be read.
	Err error
	// Problems are the annotations of the record someone else wrote that
	// read as none (nodestate.Problems, interrupt.Problem).
	Problems []string
	// Fresh is set when this read parsed the record (the node changed).
	Fresh bool
}

// Records keeps the records of the last pass per Skyhook, so that a pass
// over thousands of nodes parses only the nodes that changed since (the
// JSON of the nodeState annotation is the costly part of a pass).
type Records struct{ perSkyhook[string, Parsed] }

// Read returns the nodes' records of the Skyhook, in the nodes' order. The
// records are shared with later passes: callers copy before changing them.
//
// A full read (every selected node) keeps only the nodes read; a partial
// one (the nodes a pass visits) keeps the others as they were, less the
// gone ones.
func (r *Records) Read(sk *skyhookv1.Skyhook, nodes []corev1.Node, full bool, gone []string) []Parsed {
	r.mu.Lock()
	defer r.mu.Unlock()
	last := r.m[sk.UID]
	now := make(map[string]Parsed, len(nodes))
	if !full && last != nil {
		now = last
		for _, name := range gone {
			delete(now, name)
		}
	}
	out := make([]Parsed, len(nodes))
	for i := range nodes {
		node := &nodes[i]
		rec, ok := last[node.Name]
		if !ok || rec.UID != node.UID || rec.ResourceVersion != node.ResourceVersion {
			rec = parse(node, skyhookv1.RefOf(sk))
			out[i] = rec
			out[i].Fresh = true
		} else {
			out[i] = rec
		}
		now[node.Name] = rec
	}
	if r.m == nil {
		r.m = map[types.UID]map[string]Parsed{}
	}
	r.m[sk.UID] = now
	return out
}

func parse(node *corev1.Node, rollout skyhookv1.RolloutRef) Parsed {
	rec := Parsed{UID: node.UID, ResourceVersion: node.ResourceVersion}
	rec.Record.State, rec.Err = nodestate.Read(node, rollout)
	rec.Record.Config = nodestate.ReadConfig(node, rollout)
	rec.Record.Batch = nodestate.ReadBatch(node, rollout)
	rec.Problems = nodestate.Problems(node, rollout)
	if p := interrupt.Problem(node, rollout); p != "" {
		rec.Problems = append(rec.Problems, p)
	}
	return rec
}

// Batches holds each Skyhook's compartment batch state between passes. The
// status carries it too, but the cached Skyhook can lag this operator's
// own status writes, and judging a batch twice would count its failures
// twice; the status is read only when the process has nothing newer
// (after a restart).
type Batches struct {
	perSkyhook[string, skyhookv1.CompartmentStatus]
}

// Load is the batch state of each compartment: the status's, or what was
// stored since when that is as new or newer.
func (b *Batches) Load(sk *skyhookv1.Skyhook) map[string]skyhookv1.CompartmentStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]skyhookv1.CompartmentStatus{}
	for _, st := range sk.Status.Compartments {
		out[st.Name] = st
	}
	for name, st := range b.m[sk.UID] {
		if st.Batch >= out[name].Batch {
			out[name] = st
		}
	}
	return out
}

// Store keeps the batch state of every compartment of the Skyhook.
func (b *Batches) Store(uid types.UID, statuses []skyhookv1.CompartmentStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := make(map[string]skyhookv1.CompartmentStatus, len(statuses))
	for _, st := range statuses {
		m[st.Name] = st
	}
	if b.m == nil {
		b.m = map[types.UID]map[string]skyhookv1.CompartmentStatus{}
	}
	b.m[uid] = m
}
