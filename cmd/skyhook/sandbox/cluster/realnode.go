package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// A real node runs beside the simulated ones: containerd (with runc and the
// CNI plugins, from the distribution's packages) and a kubelet built from
// the module proxy, started and stopped by the harness like the control
// plane. Its pods really run: images are pulled, volumes mounted,
// containers started on this machine. KWOK leaves it alone (it manages the
// nodes without RealNodeLabel).
//
// Both run in a network namespace of their own with only a loopback
// interface (see netns_linux.go). Forwarders bring the apiserver and the
// image registries into it at their usual 127.0.0.1 addresses, and bring
// the kubelet's port out, so the node advertises 127.0.0.1 like the
// simulated ones and `kubectl logs` works through the apiserver.

// RealNodeLabel marks the real node (value RealNodeLabelValue); the
// simulated nodes have simnode.Label=simnode.LabelValue under the same key.
const (
	RealNodeLabel      = simnode.Label
	RealNodeLabelValue = "real"
)

// ErrRealNodeUnsupported is returned when this machine cannot run a real
// node: not Linux, not root, or containerd, runc or the CNI plugins missing.
var ErrRealNodeUnsupported = errors.New("a real node cannot run here")

// RealNodeOptions configure AddRealNode.
type RealNodeOptions struct {
	// Name of the node; "real-node" when empty.
	Name string
	// Labels of the node, besides RealNodeLabel.
	Labels map[string]string
	// PauseImage is the pod sandbox image. containerd cannot pull
	// registry.k8s.io/pause from here, so it must be in one of Registries.
	PauseImage string
	// Registries are image registries on this machine's loopback
	// ("127.0.0.1:PORT") that containerd pulls from over plain HTTP.
	Registries []string
}

// RealNode is a running kubelet and containerd.
type RealNode struct {
	Name string
	// Dir holds containerd's and the kubelet's state.
	Dir string
	// ContainerdSocket is containerd's endpoint (CRI and its own API).
	ContainerdSocket string
	// KubeletLog and ContainerdLog are the components' log files.
	KubeletLog, ContainerdLog string

	ns         *netns
	forwarders []*forwarder
	containerd *proc.Process
	kubelet    *proc.Process
}

// The programs a real node needs from the machine, and where Debian's
// containernetworking-plugins puts the CNI plugins.
var (
	realNodePrograms = []string{"containerd", "containerd-shim-runc-v2", "runc"}
	cniBinDirs       = []string{"/usr/lib/cni", "/opt/cni/bin"}
	cniPlugins       = []string{"bridge", "host-local", "loopback"}
)

// RealNodeSupported says why this machine cannot run a real node, or nil
// when it can. The Makefile's real-node-deps target installs what is
// missing on Debian.
func RealNodeSupported() error {
	if !isRoot() {
		return fmt.Errorf("%w: it needs root (namespaces, mounts, cgroups), and this process runs as uid %d", ErrRealNodeUnsupported, os.Geteuid())
	}
	for _, p := range realNodePrograms {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%w: %s is not installed (apt-get install containerd runc containernetworking-plugins, or make real-node-deps)", ErrRealNodeUnsupported, p)
		}
	}
	if _, err := cniBinDir(); err != nil {
		return fmt.Errorf("%w: %v", ErrRealNodeUnsupported, err)
	}
	return nil
}

func cniBinDir() (string, error) {
	for _, dir := range cniBinDirs {
		ok := true
		for _, p := range cniPlugins {
			if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
				ok = false
			}
		}
		if ok {
			return dir, nil
		}
	}
	return "", fmt.Errorf("the CNI plugins %v are in none of %v (apt-get install containernetworking-plugins)", cniPlugins, cniBinDirs)
}

// AddRealNode starts containerd and a kubelet that registers as a node of
// this cluster, and waits until the node is Ready. The kubelet is built
// into the cache the first time (minutes). Stop stops it with the rest.
func (c *Cluster) AddRealNode(ctx context.Context, opts RealNodeOptions) (*RealNode, error) {
	if err := RealNodeSupported(); err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "real-node"
	}
	if opts.PauseImage == "" {
		return nil, errors.New("RealNodeOptions.PauseImage is required: containerd cannot pull the default pause image here")
	}
	kubelet, err := binaries.EnsureKubelet(ctx, c.binaryOptions)
	if err != nil {
		return nil, err
	}
	if err := CheckRealNodeDir(c.Dir, opts.Name); err != nil {
		return nil, err
	}
	n := &RealNode{Name: opts.Name, Dir: realNodeDir(c.Dir, opts.Name)}
	n.ContainerdSocket = filepath.Join(n.Dir, "containerd.sock")
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return nil, err
	}
	c.realNodesMu.Lock()
	c.realNodes = append(c.realNodes, n) // Stop cleans up whatever started
	c.realNodesMu.Unlock()
	if n.ns, err = newNetns(); err != nil {
		return nil, err
	}
	if err := n.forwardIntoNamespace(append([]string{c.Config.Host}, opts.Registries...)); err != nil {
		return nil, err
	}
	fmt.Fprintf(c.log, "starting containerd for the real node %s\n", n.Name)
	if err := n.startContainerd(ctx, c.Dir, opts); err != nil {
		return nil, err
	}
	fmt.Fprintf(c.log, "starting the kubelet of %s\n", n.Name)
	if err := n.startKubelet(c, kubelet, opts); err != nil {
		return nil, err
	}
	if err := n.advertiseLoopback(ctx, c); err != nil {
		return nil, err
	}
	if err := c.WaitNodesReady(ctx, 2*time.Minute, n.Name); err != nil {
		return nil, fmt.Errorf("%w; the end of %s:\n%s", err, n.KubeletLog, proc.TailFile(n.KubeletLog, 30))
	}
	return n, nil
}

func realNodeDir(clusterDir, name string) string { return filepath.Join(clusterDir, "nodes", name) }

// CheckRealNodeDir says whether a real node of that name fits in the
// cluster directory (an absolute path): containerd's socket goes in it, and
// a socket's path is at most 108 bytes.
func CheckRealNodeDir(clusterDir, name string) error {
	if socket := filepath.Join(realNodeDir(clusterDir, name), "containerd.sock"); len(socket) > 100 {
		return fmt.Errorf("the cluster directory %s is too long for containerd's socket path %s; use a shorter one", clusterDir, socket)
	}
	return nil
}

// forwardIntoNamespace makes each address (a URL or host:port on this
// machine's loopback) reachable at the same address inside the namespace.
func (n *RealNode) forwardIntoNamespace(addrs []string) error {
	for _, a := range addrs {
		hostPort := a
		if u, err := url.Parse(a); err == nil && u.Host != "" {
			hostPort = u.Host
		}
		if host, _, err := net.SplitHostPort(hostPort); err != nil || host != "127.0.0.1" {
			return fmt.Errorf("%q: the real node reaches only 127.0.0.1:PORT addresses on this machine", a)
		}
		l, err := n.ns.listen(hostPort)
		if err != nil {
			return fmt.Errorf("forwarding %s into the node's namespace: %w", hostPort, err)
		}
		n.forwarders = append(n.forwarders, startForwarder(l, func(ctx context.Context) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", hostPort)
		}))
	}
	return nil
}

// forwardOutOfNamespace listens on a free port of this machine's loopback
// and forwards to the same port inside the namespace; it returns the port.
func (n *RealNode) forwardOutOfNamespace() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	addr := l.Addr().String()
	n.forwarders = append(n.forwarders, startForwarder(l, func(ctx context.Context) (net.Conn, error) {
		return n.ns.dial(ctx, addr)
	}))
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startContainerd writes containerd's configuration and starts it in the
// namespace, then waits for its socket.
func (n *RealNode) startContainerd(ctx context.Context, clusterDir string, opts RealNodeOptions) error {
	config, err := n.writeContainerdConfig(opts)
	if err != nil {
		return err
	}
	if err := n.ns.do(func() (err error) {
		n.containerd, err = proc.Start(clusterDir, "containerd-"+n.Name, mustLookPath("containerd"), "--config", config)
		return err
	}); err != nil {
		return err
	}
	n.ContainerdLog = n.containerd.LogFile()
	return n.containerd.WaitFor(ctx, 30*time.Second, "containerd's CRI service", func(ctx context.Context) (bool, error) {
		return criReady(ctx, n.ContainerdSocket), nil
	})
}

// startKubelet writes the kubelet's configuration and starts it in the
// namespace.
func (n *RealNode) startKubelet(c *Cluster, kubelet string, opts RealNodeOptions) error {
	port, err := n.forwardOutOfNamespace()
	if err != nil {
		return err
	}
	config, err := n.writeKubeletConfig(c.pki, port)
	if err != nil {
		return err
	}
	labels := RealNodeLabel + "=" + RealNodeLabelValue
	for k, v := range opts.Labels {
		labels += "," + k + "=" + v
	}
	return n.ns.do(func() (err error) {
		n.kubelet, err = proc.Start(c.Dir, "kubelet-"+n.Name, kubelet,
			"--config="+config,
			"--kubeconfig="+c.Kubeconfig,
			"--hostname-override="+n.Name,
			"--node-labels="+labels,
			"--root-dir="+filepath.Join(n.Dir, "kubelet"),
			"--cert-dir="+filepath.Join(n.Dir, "kubelet", "pki"),
			"--v=2")
		if err == nil {
			n.KubeletLog = n.kubelet.LogFile()
		}
		return err
	})
}

// advertiseLoopback gives the node the address 127.0.0.1 once the kubelet
// has registered it. The kubelet finds no address of its own in the
// namespace (it refuses loopback), so it leaves this one alone; through it
// the apiserver reaches the kubelet's forwarded port for logs, as it
// reaches KWOK's for the simulated nodes.
func (n *RealNode) advertiseLoopback(ctx context.Context, c *Cluster) error {
	patch := fmt.Appendf(nil, `{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"},{"type":"Hostname","address":%q}]}}`, n.Name)
	return n.kubelet.WaitFor(ctx, 2*time.Minute, "the kubelet to register "+n.Name, func(ctx context.Context) (bool, error) {
		_, err := c.Clientset.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		return err == nil, ignoreNotFound(err)
	})
}

func mustLookPath(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return name
}

// stop stops the kubelet, removes every pod sandbox (so no container or
// shim outlives the node), stops containerd, unmounts what the two left
// mounted under the node's directory, and closes the forwarders and the
// namespace.
func (n *RealNode) stop() {
	if n.kubelet != nil {
		n.kubelet.Stop(15 * time.Second)
	}
	if n.containerd != nil {
		removePodSandboxes(n.ContainerdSocket, 60*time.Second)
		n.containerd.Stop(15 * time.Second)
	}
	killShims(n.ContainerdSocket)
	unmountUnder(n.Dir)
	for _, f := range n.forwarders {
		f.Close()
	}
	if n.ns != nil {
		n.ns.close()
	}
}

// CleanUpRealNodes kills the containerd shims and detaches the mounts that
// the real nodes of the cluster directory dir left when their owner died
// without Stop (which does this itself), after proc.KillRecorded has killed
// their containerd and kubelet. It says what it did, for `sandbox down`.
func CleanUpRealNodes(dir string) []string {
	nodes, _ := filepath.Glob(filepath.Join(dir, "nodes", "*"))
	var done []string
	for _, nodeDir := range nodes {
		for _, pid := range killShims(filepath.Join(nodeDir, "containerd.sock")) {
			done = append(done, fmt.Sprintf("containerd-shim of %s (pid %d)", filepath.Base(nodeDir), pid))
		}
		if n := unmountUnder(nodeDir); n > 0 {
			done = append(done, fmt.Sprintf("%d mounts under %s (detached)", n, nodeDir))
		}
	}
	return done
}

// RealNodes are the real nodes added to the cluster.
func (c *Cluster) RealNodes() []*RealNode {
	c.realNodesMu.Lock()
	defer c.realNodesMu.Unlock()
	return slices.Clone(c.realNodes)
}

// onRealNode reports whether the node is a real one: its pods really run,
// so the simulators (SimulateHosts, SimulateContainerLogs) leave them alone.
func (c *Cluster) onRealNode(node string) bool {
	c.realNodesMu.Lock()
	defer c.realNodesMu.Unlock()
	return slices.ContainsFunc(c.realNodes, func(n *RealNode) bool { return n.Name == node })
}
