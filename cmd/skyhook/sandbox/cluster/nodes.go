package cluster

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// The cluster's simulated nodes are package simnode's; these methods reach
// them through the cluster's client and KWOK shards.

// fleet is the cluster's simulated nodes.
func (c *Cluster) fleet() *simnode.Fleet {
	return &simnode.Fleet{Config: c.Config, Clientset: c.Clientset, Shards: c.scale.shards(), Real: c.onRealNode}
}

// CreateNodes creates simulated nodes and waits until they are Ready (see
// simnode.Fleet.Create).
func (c *Cluster) CreateNodes(ctx context.Context, nodes ...simnode.Node) error {
	return c.fleet().Create(ctx, nodes...)
}

// WaitNodesReady waits until every named node, simulated or real, is Ready
// (see simnode.Fleet.WaitReady).
func (c *Cluster) WaitNodesReady(ctx context.Context, timeout time.Duration, names ...string) error {
	return c.fleet().WaitReady(ctx, timeout, names...)
}

// ApplyStages creates or updates KWOK Stage objects while the cluster runs
// (see simnode.Fleet.ApplyStages).
func (c *Cluster) ApplyStages(ctx context.Context, stages []*unstructured.Unstructured) error {
	return c.fleet().ApplyStages(ctx, stages)
}

// Reboot reboots a simulated node: NotReady, then Ready again with newBootID
// after the given downtime (2s when zero). It returns at once; use
// WaitBootID to wait for the node to come back.
func (c *Cluster) Reboot(ctx context.Context, node, newBootID string, downtime time.Duration) error {
	return c.fleet().Reboot(ctx, node, newBootID, downtime)
}

// WaitBootID waits until the node is Ready with the given bootID.
func (c *Cluster) WaitBootID(ctx context.Context, node, bootID string, timeout time.Duration) error {
	return c.fleet().WaitBootID(ctx, node, bootID, timeout)
}

// SimulateHosts starts a simnode.HostSimulator for the simulated nodes,
// which reboots a node when an interrupt pod asks it to, until ctx ends;
// downtime is how long a reboot keeps the node NotReady. The real nodes'
// agents do what their interrupt pods ask themselves.
func (c *Cluster) SimulateHosts(ctx context.Context, downtime time.Duration) *simnode.HostSimulator {
	return c.fleet().SimulateHosts(ctx, downtime)
}
