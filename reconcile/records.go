package reconcile

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/nodestate"
)

// parsedRecord is a node's record of one Skyhook, parsed from the node's
// annotations at one resourceVersion.
type parsedRecord struct {
	uid             types.UID
	resourceVersion string
	record          nodestate.Record
	err             error
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
func (p *parsedRecords) read(sk *skyhookv1.Skyhook, nodes []corev1.Node) []parsedRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	last := p.bySky[sk.UID]
	now := make(map[string]parsedRecord, len(nodes))
	out := make([]parsedRecord, len(nodes))
	for i := range nodes {
		node := &nodes[i]
		rec, ok := last[node.Name]
		if !ok || rec.uid != node.UID || rec.resourceVersion != node.ResourceVersion {
			rec = parsedRecord{uid: node.UID, resourceVersion: node.ResourceVersion}
			rec.record.State, rec.err = nodestate.Read(node, sk.Name)
			rec.record.Config = nodestate.ReadConfig(node, sk.Name)
			rec.record.Batch = nodestate.ReadBatch(node, sk.Name)
		}
		now[node.Name] = rec
		out[i] = rec
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
