package cluster

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodenet"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/vmnode"
)

// The cluster's nodes: simulated ones (package simnode), which these
// methods reach through the cluster's client and KWOK shards, and real
// ones (package kubeletnode), which it starts and stops.

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

// AddRealNode starts containerd and a kubelet that registers as a node of
// this cluster (see package kubeletnode), and waits until the node is
// Ready. The kubelet is built into the cache the first time (minutes).
// Stop stops it with the rest.
func (c *Cluster) AddRealNode(ctx context.Context, opts kubeletnode.Options) (*kubeletnode.Node, error) {
	if opts.Network == nil {
		opts.Network = c.network
	}
	n, err := kubeletnode.Prepare(ctx, c.Dir, c.binaryOptions, opts)
	if err != nil {
		return nil, err
	}
	c.realNodesMu.Lock()
	c.realNodes = append(c.realNodes, n) // Stop cleans up whatever started
	c.realNodesMu.Unlock()
	if err := n.Start(ctx, c.controlPlane(), c.log); err != nil {
		return nil, err
	}
	if err := c.WaitNodesReady(ctx, 2*time.Minute, n.Name); err != nil {
		return nil, fmt.Errorf("%w; the end of %s:\n%s", err, n.KubeletLog, proc.TailFile(n.KubeletLog, 30))
	}
	return n, nil
}

// controlPlane is what a real or virtual machine node needs of the
// cluster it joins.
func (c *Cluster) controlPlane() kubeletnode.ControlPlane {
	return kubeletnode.ControlPlane{
		Server: c.Config.Host, Kubeconfig: c.Kubeconfig, Clientset: c.Clientset,
		CAFile: c.pki.CAFile, KubeletCertFile: c.pki.KubeletCertFile, KubeletKeyFile: c.pki.KubeletKeyFile,
		KubeletServingCert: c.pki.kubeletServingCert,
	}
}

// createRealNodeNetwork makes the network the real nodes join; Stop
// deletes it.
func (c *Cluster) createRealNodeNetwork() error {
	nw, err := nodenet.Create() // root; the nodes check what else they need
	if err != nil {
		return err
	}
	c.network = nw
	fmt.Fprintf(c.log, "the real nodes' network: bridge %s, this machine at %s\n", nw.Bridge, nw.Gateway())
	return nil
}

// advertiseAddress is where the apiserver says it is (the kubernetes
// Service's endpoint): the network's gateway, which pods reach, or
// loopback.
func (c *Cluster) advertiseAddress() string {
	if c.network != nil {
		return c.network.Gateway().String()
	}
	return "127.0.0.1"
}

// RealNodes are the real nodes added to the cluster.
func (c *Cluster) RealNodes() []*kubeletnode.Node {
	c.realNodesMu.Lock()
	defer c.realNodesMu.Unlock()
	return slices.Clone(c.realNodes)
}

// onRealNode reports whether the node is a real one: its pods really run,
// so the simulators (SimulateHosts, SimulateContainerLogs) leave them alone.
func (c *Cluster) onRealNode(node string) bool {
	c.realNodesMu.Lock()
	defer c.realNodesMu.Unlock()
	return slices.ContainsFunc(c.realNodes, func(n *kubeletnode.Node) bool { return n.Name == node }) ||
		slices.ContainsFunc(c.vmNodes, func(n *vmnode.Node) bool { return n.Name == node })
}

// apiserverPort is the port the apiserver serves on (on loopback).
func (c *Cluster) apiserverPort() int {
	u, err := url.Parse(c.Config.Host)
	if err != nil {
		return 0
	}
	port, _ := strconv.Atoi(u.Port())
	return port
}
