// Package kubeletnode runs a real node beside the simulated ones:
// containerd (with runc and the CNI plugins, from the distribution's
// packages) and a kubelet built from the module proxy, started and stopped
// by the harness like the control plane. Its pods really run: images are
// pulled, volumes mounted, containers started on this machine. KWOK leaves
// it alone (it manages the nodes without Label=LabelValue).
//
// Both run in a network namespace of their own (see netns_linux.go).
// Forwarders bring the apiserver and the image registries into it at their
// usual 127.0.0.1 addresses. On a network (Options.Network, package
// nodenet) the node has an address of its own: the kubelet serves there
// and registers it as the node's InternalIP, and pods on two real nodes
// reach each other. Without one the namespace has only a loopback
// interface, a forwarder brings the kubelet's port out, and the node
// advertises 127.0.0.1 like the simulated ones; `kubectl logs` works
// through the apiserver either way.
//
// Package cluster adds one to its cluster (Cluster.AddRealNode) with
// Prepare and Start, and stops it with the cluster.
package kubeletnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodenet"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
)

// Label marks the real node (value LabelValue); the simulated nodes have
// the value "kwok" under the same key (simnode.Label).
const (
	Label      = "type"
	LabelValue = "real"
)

// ErrUnsupported is returned when this machine cannot run a real node: not
// Linux, not root, or containerd, runc or the CNI plugins missing.
var ErrUnsupported = errors.New("a real node cannot run here")

// Options configure a real node.
type Options struct {
	// Name of the node; "real-node" when empty.
	Name string
	// Labels of the node, besides Label.
	Labels map[string]string
	// PauseImage is the pod sandbox image. containerd cannot pull
	// registry.k8s.io/pause from here, so it must be in one of Registries.
	PauseImage string
	// Registries are image registries on this machine's loopback
	// ("127.0.0.1:PORT") that containerd pulls from over plain HTTP.
	Registries []string
	// Network, when set, gives the node an address of its own on it and a
	// pod range routed to from the other nodes on it and this machine.
	Network *nodenet.Network
	// BuiltContainerd runs containerd (and its runc shim) built from the
	// module proxy at binaries.ContainerdVersion, which mounts image
	// volumes, instead of the machine's (Debian's 1.6, which does not).
	// runc and the CNI plugins are the machine's either way.
	BuiltContainerd bool
}

// Node is a running kubelet and containerd.
type Node struct {
	Name string
	// Dir holds containerd's and the kubelet's state.
	Dir string
	// ContainerdSocket is containerd's endpoint (CRI and its own API).
	ContainerdSocket string
	// KubeletLog and ContainerdLog are the components' log files, and
	// KubeProxyLog kube-proxy's on a network.
	KubeletLog, ContainerdLog, KubeProxyLog string

	// clusterDir holds the processes' logs and pid files, with the
	// cluster's; opts and kubeletBinary are what Prepare settled.
	clusterDir    string
	opts          Options
	kubeletBinary string

	// Address is the node's InternalIP: its own on a network, else
	// 127.0.0.1.
	Address netip.Addr

	ns         *netns
	attachment *nodenet.Attachment
	forwarders []*nodenet.Forwarder
	containerd *proc.Process
	kubelet    *proc.Process
	kubeProxy  *proc.Process
	// bin says where the cache is, for kube-proxy.
	bin binaries.Options
	// containerdDir holds the built containerd and its shim
	// (Options.BuiltContainerd); empty runs the machine's.
	containerdDir string
}

// The programs a real node needs from the machine, and where Debian's
// containernetworking-plugins puts the CNI plugins.
var (
	realNodePrograms = []string{"containerd", "containerd-shim-runc-v2", "runc"}
	cniBinDirs       = []string{"/usr/lib/cni", "/opt/cni/bin"}
	cniPlugins       = []string{"bridge", "host-local", "loopback"}
)

// Supported says why this machine cannot run a real node, or nil when it
// can. The Makefile's real-node-deps target installs what is missing on
// Debian.
func Supported() error {
	if !isRoot() {
		return fmt.Errorf("%w: it needs root (namespaces, mounts, cgroups), and this process runs as uid %d", ErrUnsupported, os.Geteuid())
	}
	for _, p := range realNodePrograms {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%w: %s is not installed (apt-get install containerd runc containernetworking-plugins, or make real-node-deps)", ErrUnsupported, p)
		}
	}
	if _, err := cniBinDir(); err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
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

// Prepare checks that this machine can run a real node (Supported) and
// that opts are complete, builds the kubelet into the cache of bin the
// first time (minutes), and makes the node's directory under the cluster
// directory clusterDir. Start runs the node.
func Prepare(ctx context.Context, clusterDir string, bin binaries.Options, opts Options) (*Node, error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "real-node"
	}
	if opts.PauseImage == "" {
		return nil, errors.New("kubeletnode.Options.PauseImage is required: containerd cannot pull the default pause image here")
	}
	kubelet, err := binaries.EnsureKubelet(ctx, bin)
	if err != nil {
		return nil, err
	}
	if err := CheckDir(clusterDir, opts.Name); err != nil {
		return nil, err
	}
	n := &Node{Name: opts.Name, Dir: nodeDir(clusterDir, opts.Name), clusterDir: clusterDir, opts: opts, kubeletBinary: kubelet, bin: bin}
	if opts.BuiltContainerd {
		if n.containerdDir, err = binaries.EnsureContainerd(ctx, bin); err != nil {
			return nil, err
		}
	}
	n.ContainerdSocket = filepath.Join(n.Dir, "containerd.sock")
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return nil, err
	}
	return n, nil
}

// ControlPlane is what a real node needs of the cluster it joins.
type ControlPlane struct {
	// Server is the apiserver's URL, on this machine's loopback.
	Server string
	// Kubeconfig is the file the kubelet reaches the apiserver with.
	Kubeconfig string
	// Clientset reaches the apiserver as its admin.
	Clientset kubernetes.Interface
	// CAFile is the cluster's CA, which the kubelet trusts for the
	// apiserver's client certificate.
	CAFile string
	// KubeletCertFile and KubeletKeyFile are the certificate the kubelet
	// serves its API with on loopback (the one KWOK serves the simulated
	// nodes' with).
	KubeletCertFile, KubeletKeyFile string
	// KubeletServingCert issues a certificate for a kubelet serving at
	// its own address (the apiserver checks the kubelet's certificate
	// against the cluster CA); needed on a network.
	KubeletServingCert func(node string, ip netip.Addr) (certFile, keyFile string, err error)
}

// Start starts containerd and a kubelet that registers the node with the
// control plane, and returns once the node has registered (it need not be
// Ready yet); log gets progress messages. Whatever Start started, Stop
// stops, also when Start fails.
func (n *Node) Start(ctx context.Context, cp ControlPlane, log io.Writer) error {
	var err error
	if n.ns, err = newNetns(); err != nil {
		return err
	}
	n.Address = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	if n.opts.Network != nil {
		if n.attachment, err = n.opts.Network.Attach(n.ns.fd, n.Name); err != nil {
			return err
		}
		n.Address = n.attachment.Address
		fmt.Fprintf(log, "the real node %s has the address %s, pods %s\n", n.Name, n.Address, n.attachment.Pods)
	}
	if err := n.forwardIntoNamespace(append([]string{cp.Server}, n.opts.Registries...)); err != nil {
		return err
	}
	fmt.Fprintf(log, "starting containerd for the real node %s\n", n.Name)
	if err := n.startContainerd(ctx); err != nil {
		return err
	}
	fmt.Fprintf(log, "starting the kubelet of %s\n", n.Name)
	if err := n.startKubelet(cp); err != nil {
		return err
	}
	if n.attachment == nil {
		return n.advertiseLoopback(ctx, cp.Clientset)
	}
	fmt.Fprintf(log, "starting kube-proxy on %s\n", n.Name)
	if err := n.startKubeProxy(ctx, cp); err != nil {
		return err
	}
	return n.waitRegistered(ctx, cp.Clientset)
}

func nodeDir(clusterDir, name string) string { return filepath.Join(clusterDir, "nodes", name) }

// CheckDir says whether a real node of that name fits in the cluster
// directory (an absolute path): containerd's socket goes in it, and a
// socket's path is at most 108 bytes.
func CheckDir(clusterDir, name string) error {
	if socket := filepath.Join(nodeDir(clusterDir, name), "containerd.sock"); len(socket) > 100 {
		return fmt.Errorf("the cluster directory %s is too long for containerd's socket path %s; use a shorter one", clusterDir, socket)
	}
	return nil
}

// forwardIntoNamespace makes each address (a URL or host:port on this
// machine's loopback) reachable at the same address inside the namespace.
func (n *Node) forwardIntoNamespace(addrs []string) error {
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
		n.forwarders = append(n.forwarders, nodenet.ForwardToMachine(l, hostPort))
	}
	return nil
}

// forwardOutOfNamespace listens on a free port of this machine's loopback
// and forwards to the same port inside the namespace; it returns the port.
func (n *Node) forwardOutOfNamespace() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	addr := l.Addr().String()
	n.forwarders = append(n.forwarders, nodenet.StartForwarder(l, func(ctx context.Context) (net.Conn, error) {
		return n.ns.dial(ctx, addr)
	}))
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startKubelet writes the kubelet's configuration and starts it in the
// namespace: serving at the node's own address on a network, else on the
// namespace's loopback behind a forwarder.
func (n *Node) startKubelet(cp ControlPlane) error {
	serving, err := n.kubeletServing(cp)
	if err != nil {
		return err
	}
	config, err := n.writeKubeletConfig(cp, serving)
	if err != nil {
		return err
	}
	labels := Label + "=" + LabelValue
	for k, v := range n.opts.Labels {
		labels += "," + k + "=" + v
	}
	args := []string{
		"--config=" + config,
		"--kubeconfig=" + cp.Kubeconfig,
		"--hostname-override=" + n.Name,
		"--node-labels=" + labels,
		"--root-dir=" + filepath.Join(n.Dir, "kubelet"),
		"--cert-dir=" + filepath.Join(n.Dir, "kubelet", "pki"),
		"--v=2",
	}
	if n.attachment != nil {
		// Without it the kubelet would look the name up; loopback it refuses.
		args = append(args, "--node-ip="+n.Address.String())
	}
	return n.ns.do(func() (err error) {
		n.kubelet, err = proc.Start(n.clusterDir, "kubelet-"+n.Name, n.kubeletBinary, args...)
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
func (n *Node) advertiseLoopback(ctx context.Context, cs kubernetes.Interface) error {
	patch := fmt.Appendf(nil, `{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"},{"type":"Hostname","address":%q}]}}`, n.Name)
	return n.kubelet.WaitFor(ctx, 2*time.Minute, "the kubelet to register "+n.Name, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// kubeletServing is where and with what certificate the kubelet serves.
func (n *Node) kubeletServing(cp ControlPlane) (kubeletServing, error) {
	if n.attachment == nil {
		port, err := n.forwardOutOfNamespace()
		return kubeletServing{address: "127.0.0.1", port: port, certFile: cp.KubeletCertFile, keyFile: cp.KubeletKeyFile}, err
	}
	if cp.KubeletServingCert == nil {
		return kubeletServing{}, errors.New("kubeletnode.ControlPlane.KubeletServingCert is required for a node on a network")
	}
	certFile, keyFile, err := cp.KubeletServingCert(n.Name, n.Address)
	return kubeletServing{address: n.Address.String(), port: 10250, certFile: certFile, keyFile: keyFile}, err
}

// kubeletServing is the kubelet's API endpoint and serving certificate.
type kubeletServing struct {
	address           string
	port              int
	certFile, keyFile string
}

// waitRegistered waits for the kubelet to register the node, with its own
// address.
func (n *Node) waitRegistered(ctx context.Context, cs kubernetes.Interface) error {
	return n.kubelet.WaitFor(ctx, 2*time.Minute, "the kubelet to register "+n.Name, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

func mustLookPath(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return name
}

// Stop stops the kubelet, removes every pod sandbox (so no container or
// shim outlives the node), stops containerd, unmounts what the two left
// mounted under the node's directory, and closes the forwarders and the
// namespace. Cluster.Stop stops the nodes it added.
func (n *Node) Stop() {
	if n.kubeProxy != nil {
		n.kubeProxy.Stop(10 * time.Second)
	}
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
	if n.attachment != nil {
		n.opts.Network.Detach(n.attachment)
	}
	if n.ns != nil {
		n.ns.close()
	}
}

// CleanUp kills the containerd shims and detaches the mounts that the real
// nodes of the cluster directory dir left when their owner died without
// Stop (which does this itself), after proc.KillRecorded has killed their
// containerd and kubelet. It says what it did, for `sandbox down`.
func CleanUp(dir string) []string {
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
