package simnode

import (
	"hash/fnv"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Fleet is the simulated nodes of one cluster, and what reaches them.
type Fleet struct {
	// Config and Clientset reach the cluster's apiserver as its admin.
	Config    *rest.Config
	Clientset kubernetes.Interface
	// Shards is how many KWOK processes share the nodes (0 or 1: one);
	// with more, Create gives each node its ShardLabel.
	Shards int
	// Real reports whether a node is a real one, whose pods really run,
	// which the HostSimulator leaves alone; nil when there is none.
	Real func(node string) bool
}

func (f *Fleet) isReal(node string) bool { return f.Real != nil && f.Real(node) }

// ShardLabel says which KWOK shard manages a simulated node (see
// Fleet.Shards). Nodes made by Create get it when there is more than one
// shard.
const ShardLabel = "sim.skyhook.dev/kwok-shard"

// shardOf is the shard of a node among shards: a hash of its name, so that
// it does not depend on the order or batch nodes are created in.
func shardOf(name string, shards int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return int(h.Sum32() % uint32(max(1, shards)))
}
