package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
)

// StartSourceController runs Flux's source-controller against the cluster
// (its CRDs must be installed), with its artifact storage served on a
// loopback port, and waits until it is ready. It stops with the cluster.
func (c *Cluster) StartSourceController(ctx context.Context, sc *binaries.Controller) error {
	ports, err := proc.FreePorts(3)
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
	if err := p.WaitHTTP(ctx, http.DefaultClient, "http://"+health+"/readyz", 2*time.Minute); err != nil {
		return fmt.Errorf("source-controller: %w", err)
	}
	c.sourceStorage = storage
	return nil
}

// StartKustomizeController runs Flux's kustomize-controller against the
// cluster as its admin (the Kustomization CRD and source-controller's must
// be installed) and waits until it is ready. It applies the artifacts of
// source-controller, so StartSourceController comes first. It stops with
// the cluster.
func (c *Cluster) StartKustomizeController(ctx context.Context, kc *binaries.Controller) error {
	if c.sourceStorage == "" {
		return errors.New("kustomize-controller: start source-controller first, whose artifacts it applies")
	}
	ports, err := proc.FreePorts(2)
	if err != nil {
		return err
	}
	// At start it deletes the kustomization-* directories it finds in its
	// temporary directory as an earlier run's leftovers; in a shared /tmp
	// they could be another cluster's, in use.
	tmp := filepath.Join(c.Dir, "kustomize-controller")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	env := []string{"KUBECONFIG=" + c.Kubeconfig, "TMPDIR=" + tmp,
		// Artifact URLs already name the loopback address source-controller
		// advertises; this keeps the fetches there if that ever changes, as
		// the operator's ArtifactHostname does.
		"SOURCE_CONTROLLER_LOCALHOST=" + c.sourceStorage}
	health := "127.0.0.1:" + strconv.Itoa(ports[0])
	p, err := c.startEnv("kustomize-controller", kc.Binary, env,
		"--metrics-addr=127.0.0.1:"+strconv.Itoa(ports[1]), "--health-addr="+health,
		// No notification-controller: events go to the apiserver only.
		"--events-addr=",
		// Outside a cluster there is no RUNTIME_NAMESPACE to narrow it to.
		"--watch-all-namespaces=true",
		// A Kustomization whose dependsOn is not Ready yet is tried again
		// after this, 30 s by default: seconds suit a local cluster.
		"--requeue-dependency=5s",
		"--enable-leader-election=false", "--log-level=info")
	if err != nil {
		return err
	}
	if err := p.WaitHTTP(ctx, http.DefaultClient, "http://"+health+"/readyz", 2*time.Minute); err != nil {
		return fmt.Errorf("kustomize-controller: %w", err)
	}
	return nil
}

// startEnv is start with extra environment variables for the process.
func (c *Cluster) startEnv(name, path string, env []string, args ...string) (*proc.Process, error) {
	p, err := proc.StartEnv(c.Dir, name, path, env, args...)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}
