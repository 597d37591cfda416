package fleet

import "sync"

// Changes collects, between two passes of each Skyhook, the nodes whose
// node object or stage pods changed, and whether something changed that
// concerns every node (then the next pass visits them all). The watch
// handlers write it; a pass takes what was collected for its Skyhook. It is
// safe for concurrent use.
type Changes struct {
	mu      sync.Mutex
	pending map[string]*pending
}

type pending struct {
	nodes map[string]struct{}
	all   bool
}

func (c *Changes) of(skyhook string) *pending {
	if c.pending == nil {
		c.pending = map[string]*pending{}
	}
	p := c.pending[skyhook]
	if p == nil {
		p = &pending{nodes: map[string]struct{}{}}
		c.pending[skyhook] = p
	}
	return p
}

// Node notes a change of the node for the Skyhook.
func (c *Changes) Node(skyhook, node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.of(skyhook); !p.all {
		p.nodes[node] = struct{}{}
	}
}

// All notes a change that concerns every node of the Skyhook.
func (c *Changes) All(skyhook string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.of(skyhook)
	p.all, p.nodes = true, map[string]struct{}{}
}

// Take returns and clears what was collected for the Skyhook: the changed
// nodes, or all=true.
func (c *Changes) Take(skyhook string) (nodes []string, all bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[skyhook]
	if p == nil {
		return nil, false
	}
	delete(c.pending, skyhook)
	if p.all {
		return nil, true
	}
	nodes = make([]string, 0, len(p.nodes))
	for n := range p.nodes {
		nodes = append(nodes, n)
	}
	return nodes, false
}

// Forget drops what was collected for a deleted Skyhook.
func (c *Changes) Forget(skyhook string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, skyhook)
}

// Sizes are the nodes noted per Skyhook (0 for a change of all of them).
func (c *Changes) Sizes() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.pending))
	for name, p := range c.pending {
		out[name] = len(p.nodes)
	}
	return out
}
