package fleet

import "sync"

// Changes collects, between two passes of each rollout (keyed by K), the
// nodes whose node object or stage pods changed, and whether something
// changed that concerns every node (then the next pass visits them all).
// The watch handlers write it; a pass takes what was collected for its
// rollout. It is safe for concurrent use.
type Changes[K comparable] struct {
	mu      sync.Mutex
	pending map[K]*pending
}

type pending struct {
	nodes map[string]struct{}
	all   bool
}

func (c *Changes[K]) of(rollout K) *pending {
	if c.pending == nil {
		c.pending = map[K]*pending{}
	}
	p := c.pending[rollout]
	if p == nil {
		p = &pending{nodes: map[string]struct{}{}}
		c.pending[rollout] = p
	}
	return p
}

// Node notes a change of the node for the rollout.
func (c *Changes[K]) Node(rollout K, node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.of(rollout); !p.all {
		p.nodes[node] = struct{}{}
	}
}

// All notes a change that concerns every node of the rollout.
func (c *Changes[K]) All(rollout K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.of(rollout)
	p.all, p.nodes = true, map[string]struct{}{}
}

// Take returns and clears what was collected for the rollout: the changed
// nodes, or all=true.
func (c *Changes[K]) Take(rollout K) (nodes []string, all bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending[rollout]
	if p == nil {
		return nil, false
	}
	delete(c.pending, rollout)
	if p.all {
		return nil, true
	}
	nodes = make([]string, 0, len(p.nodes))
	for n := range p.nodes {
		nodes = append(nodes, n)
	}
	return nodes, false
}

// Forget drops what was collected for a deleted rollout.
func (c *Changes[K]) Forget(rollout K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, rollout)
}

// Sizes are the nodes noted per rollout (0 for a change of all of them).
func (c *Changes[K]) Sizes() map[K]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[K]int, len(c.pending))
	for name, p := range c.pending {
		out[name] = len(p.nodes)
	}
	return out
}
