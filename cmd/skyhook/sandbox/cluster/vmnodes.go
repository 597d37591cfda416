package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/vmnode"
)

// AddVMNode boots a virtual machine that joins the cluster as a node (see
// package vmnode) on the real nodes' network, which the cluster must have
// (Options.RealNodeNetwork), and waits until the node is Ready. The node
// image is built into the cache the first time (minutes). Stop powers the
// machine off with the rest.
func (c *Cluster) AddVMNode(ctx context.Context, opts vmnode.Options) (*vmnode.Node, error) {
	if c.network == nil {
		return nil, errors.New("a virtual machine node joins the real nodes' network: start the cluster with Options.RealNodeNetwork")
	}
	opts.Network = c.network
	n, err := vmnode.Prepare(ctx, c.Dir, c.binaryOptions, opts, c.log)
	if err != nil {
		return nil, err
	}
	c.realNodesMu.Lock()
	c.vmNodes = append(c.vmNodes, n) // Stop cleans up whatever started
	c.realNodesMu.Unlock()
	start := time.Now()
	if err := n.Start(ctx, c.controlPlane(), c.log); err != nil {
		return nil, err
	}
	if err := c.WaitNodesReady(ctx, 10*time.Minute, n.Name); err != nil {
		return nil, fmt.Errorf("%w; the end of its console %s:\n%s", err, n.ConsoleLog, proc.TailFile(n.ConsoleLog, 30))
	}
	fmt.Fprintf(c.log, "the virtual machine %s is Ready %s after it was started\n", n.Name, time.Since(start).Round(time.Second))
	return n, nil
}

// AddVMNodes boots the machines side by side, as AddVMNode boots one, and
// returns them in the order of opts. Booting them one after another cost
// a minute or more per machine under emulation, most of it the guest
// waiting on its own disk and network, time that overlaps well. The first
// error is returned; Stop powers off whatever started.
func (c *Cluster) AddVMNodes(ctx context.Context, opts ...vmnode.Options) ([]*vmnode.Node, error) {
	if len(opts) > 0 {
		// The node image is built once, before the machines race for it.
		if _, err := vmnode.EnsureImage(ctx, c.binaryOptions, c.log); err != nil {
			return nil, err
		}
	}
	nodes := make([]*vmnode.Node, len(opts))
	g, gctx := errgroup.WithContext(ctx)
	for i, o := range opts {
		g.Go(func() error {
			n, err := c.AddVMNode(gctx, o)
			nodes[i] = n
			return err
		})
	}
	return nodes, g.Wait()
}

// VMNodes are the virtual machine nodes added to the cluster.
func (c *Cluster) VMNodes() []*vmnode.Node {
	c.realNodesMu.Lock()
	defer c.realNodesMu.Unlock()
	return slices.Clone(c.vmNodes)
}
