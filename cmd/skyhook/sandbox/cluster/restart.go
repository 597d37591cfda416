package cluster

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
)

// Restart stops one component of the control plane ("etcd",
// "kube-apiserver", "kube-controller-manager" or "kwok") and starts it
// again with the same command line, then waits until the apiserver answers
// ready again (which needs etcd too). Clients see connections refused,
// then their watches ended, as after a real restart; state in etcd is
// kept. For fault-injection tests.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	i := c.processIndex(name)
	if i < 0 {
		return fmt.Errorf("no component %q runs in this cluster", name)
	}
	old := c.procs[i]
	old.Stop(10 * time.Second)
	p, err := old.StartAgain()
	if err != nil {
		return err
	}
	c.procs[i] = p
	hc, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return err
	}
	apiserver := c.procs[c.processIndex("kube-apiserver")]
	return apiserver.WaitHTTP(ctx, hc, c.Config.Host+"/readyz", 60*time.Second)
}

func (c *Cluster) processIndex(name string) int {
	for i, p := range c.procs {
		if p.Name() == name {
			return i
		}
	}
	return -1
}
