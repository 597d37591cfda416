package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster/binaries"
)

// StartSourceController runs Flux's source-controller against the cluster
// (its CRDs must be installed), with its artifact storage served on a
// loopback port, and waits until it is ready. It stops with the cluster.
func (c *Cluster) StartSourceController(ctx context.Context, sc *binaries.Controller) error {
	ports, err := FreePorts(3)
	if err != nil {
		return err
	}
	storage := "127.0.0.1:" + strconv.Itoa(ports[0])
	storagePath := filepath.Join(c.Dir, "source-controller")
	if err := os.MkdirAll(storagePath, 0o755); err != nil {
		return err
	}
	health := "127.0.0.1:" + strconv.Itoa(ports[1])
	p, err := c.startEnv("source-controller", sc.Binary, []string{"KUBECONFIG=" + c.Kubeconfig},
		"--storage-path="+storagePath,
		"--storage-addr="+storage, "--storage-adv-addr="+storage,
		"--metrics-addr=127.0.0.1:"+strconv.Itoa(ports[2]), "--health-addr="+health,
		"--enable-leader-election=false", "--log-level=info")
	if err != nil {
		return err
	}
	if err := c.waitHTTP(ctx, p, http.DefaultClient, "http://"+health+"/readyz", 2*time.Minute); err != nil {
		return fmt.Errorf("source-controller: %w", err)
	}
	return nil
}

// startEnv is start with extra environment variables for the process.
func (c *Cluster) startEnv(name, path string, env []string, args ...string) (*process, error) {
	p, err := startProcessEnv(c.Dir, name, path, env, args...)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}
