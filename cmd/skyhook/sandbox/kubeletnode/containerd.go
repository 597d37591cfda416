package kubeletnode

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
)

// startContainerd writes containerd's configuration and starts it in the
// namespace, then waits for its socket.
func (n *Node) startContainerd(ctx context.Context) error {
	config, err := n.writeContainerdConfig()
	if err != nil {
		return err
	}
	binary, env := mustLookPath("containerd"), []string(nil)
	if n.containerdDir != "" {
		// containerd finds its shim on its PATH.
		binary, env = filepath.Join(n.containerdDir, "containerd"), []string{"PATH=" + n.containerdDir + ":" + os.Getenv("PATH")}
	}
	if err := n.ns.do(func() (err error) {
		n.containerd, err = proc.StartEnv(n.clusterDir, "containerd-"+n.Name, binary, env, "--config", config)
		return err
	}); err != nil {
		return err
	}
	n.ContainerdLog = n.containerd.LogFile()
	return n.containerd.WaitFor(ctx, 30*time.Second, "containerd's CRI service", func(ctx context.Context) (bool, error) {
		return criReady(ctx, n.ContainerdSocket), nil
	})
}
