package vmnode

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodenet"
)

// The config disk: a small ext4 image per machine, made with mkfs.ext4 -d
// from a directory of files and mounted read-only at configDir in the
// guest. It holds what makes the machine this node: its name, address
// and routes (setup.sh), the kubelet's credentials and configuration,
// containerd's configuration with the host registries, kube-proxy's.
// The apiserver and the registries listen on this machine's loopback;
// the guest reaches them at the network's gateway (Network.ExposeLoopback).

// seed is what one node's config disk is made from.
type seed struct {
	node    string
	labels  string
	att     *nodenet.Attachment
	cp      kubeletnode.ControlPlane
	gateway string // the apiserver's host:port as the guest reaches it
	pause   string
	// registries map a registry as images name it (127.0.0.1:PORT) to
	// where the guest reaches it (GATEWAY:PORT).
	registries map[string]string
}

// write fills dir with the config disk's files.
func (s seed) write(dir string) error {
	files := map[string]string{
		"setup.sh":             s.setupScript(),
		"kubelet.env":          s.kubeletEnv(),
		"containerd.toml":      s.containerdConfig(),
		"cni/10-node.conflist": s.cniConfig(),
	}
	for from, to := range s.registries {
		files["registries/"+from+"/hosts.toml"] = fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", "http://"+to, "http://"+to)
	}
	kubeconfig, err := s.kubeconfig()
	if err != nil {
		return err
	}
	files["kubeconfig"] = kubeconfig
	if files["kubelet.yaml"], err = s.kubeletConfig(); err != nil {
		return err
	}
	if files["kube-proxy.yaml"], err = s.kubeProxyConfig(); err != nil {
		return err
	}
	if err := s.copyCerts(files); err != nil {
		return err
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// setupScript names the machine, addresses its eth0, routes to the other
// nodes' pods and loads what containerd and kube-proxy need. It runs at
// every boot (the address is not kept on the disk).
func (s seed) setupScript() string {
	var b strings.Builder
	fmt.Fprintf(&b, "set -eu\nhostname %s\n", s.node)
	fmt.Fprintf(&b, "ip link set eth0 up\nip addr replace %s/%d dev eth0\n", s.att.Address, s.att.Bits)
	for _, r := range s.att.PeerRoutes() {
		fmt.Fprintf(&b, "ip route replace %s via %s\n", r.Dst, r.Via)
	}
	b.WriteString("modprobe overlay\nmodprobe br_netfilter\n")
	b.WriteString("sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1\n")
	return b.String()
}

func (s seed) kubeletEnv() string {
	args := []string{
		"--config=" + configDir + "/kubelet.yaml",
		"--kubeconfig=" + configDir + "/kubeconfig",
		"--hostname-override=" + s.node,
		"--node-ip=" + s.att.Address.String(),
		"--node-labels=" + s.labels,
		// Not the real nodes' 2: each line is a journald write, paid
		// for in emulated CPU; failures still reach the console.
		"--v=1",
	}
	return "KUBELET_ARGS=\"" + strings.Join(args, " ") + "\"\n"
}

// containerdConfig: containerd's own paths (on the machine's disk, so
// images survive a reboot), systemd's cgroups (systemd is PID 1 here),
// the pause image and registries from the host, the CNI bridge.
func (s seed) containerdConfig() string {
	return "version = 2\n\n" + kubeletnode.CRIConfig(kubeletnode.CRI{Pause: s.pause, CNIBin: "/usr/lib/cni",
		CNIConf: configDir + "/cni", Registries: configDir + "/registries", SystemdCgroup: true})
}

// cniConfig is the bridge network of the node's pods, from its range on
// the network (routed to from this machine and the other nodes).
func (s seed) cniConfig() string {
	return nodenet.BridgeCNIConfig("skyhook-vm-node", s.att.Pods.String())
}

// kubeconfig is the cluster's kubeconfig for the guest: the apiserver at
// the gateway, its certificate checked for the name it carries
// ("kubernetes"), the credentials embedded.
func (s seed) kubeconfig() (string, error) {
	cfg, err := clientcmd.LoadFromFile(s.cp.Kubeconfig)
	if err != nil {
		return "", err
	}
	for _, cluster := range cfg.Clusters {
		u, err := url.Parse(cluster.Server)
		if err != nil {
			return "", err
		}
		u.Host = s.gateway
		cluster.Server = u.String()
		cluster.TLSServerName = "kubernetes"
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		return "", err
	}
	data, err := clientcmd.Write(*cfg)
	return string(data), err
}

// kubeletConfig: systemd's cgroups, its serving certificate for its own
// address, the cluster CA for the apiserver's client certificate, low
// eviction thresholds (the disk is small) and quick status updates.
func (s seed) kubeletConfig() (string, error) {
	cfg := kubeletv1beta1.KubeletConfiguration{
		TypeMeta:                  metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		Address:                   s.att.Address.String(),
		TLSCertFile:               configDir + "/pki/kubelet.crt",
		TLSPrivateKeyFile:         configDir + "/pki/kubelet.key",
		Authentication:            kubeletv1beta1.KubeletAuthentication{Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)}, Webhook: kubeletv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(false)}, X509: kubeletv1beta1.KubeletX509Authentication{ClientCAFile: configDir + "/pki/ca.crt"}},
		Authorization:             kubeletv1beta1.KubeletAuthorization{Mode: kubeletv1beta1.KubeletAuthorizationModeAlwaysAllow},
		CgroupDriver:              "systemd",
		ContainerRuntimeEndpoint:  "unix:///run/containerd/containerd.sock",
		FailSwapOn:                ptr.To(false),
		EvictionHard:              map[string]string{"memory.available": "50Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
		NodeStatusUpdateFrequency: metav1.Duration{Duration: 10e9},
		SyncFrequency:             metav1.Duration{Duration: 10e9},
	}
	data, err := yaml.Marshal(cfg)
	return string(data), err
}

func (s seed) kubeProxyConfig() (string, error) {
	cfg := kubeproxyv1alpha1.KubeProxyConfiguration{
		TypeMeta:         metav1.TypeMeta{APIVersion: "kubeproxy.config.k8s.io/v1alpha1", Kind: "KubeProxyConfiguration"},
		HostnameOverride: s.node,
		BindAddress:      s.att.Address.String(),
		Mode:             "iptables",
		DetectLocalMode:  "ClusterCIDR",
		ClusterCIDR:      s.att.NetworkPods.String(),
	}
	cfg.ClientConnection.Kubeconfig = configDir + "/kubeconfig"
	data, err := yaml.Marshal(cfg)
	return string(data), err
}

// copyCerts adds the cluster CA and a serving certificate for the
// kubelet at the node's address, issued by the cluster CA.
func (s seed) copyCerts(files map[string]string) error {
	ca, err := os.ReadFile(s.cp.CAFile)
	if err != nil {
		return err
	}
	files["pki/ca.crt"] = string(ca)
	certFile, keyFile, err := s.cp.KubeletServingCert(s.node, s.att.Address)
	if err != nil {
		return err
	}
	for name, from := range map[string]string{"pki/kubelet.crt": certFile, "pki/kubelet.key": keyFile} {
		data, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		files[name] = string(data)
	}
	return nil
}

// makeConfigDisk writes the seed's files into a directory and makes an
// ext4 image of it at path.
func makeConfigDisk(ctx context.Context, s seed, path string, log io.Writer) error {
	dir := path + ".d"
	_ = os.RemoveAll(dir)
	defer os.RemoveAll(dir)
	if err := s.write(dir); err != nil {
		return fmt.Errorf("writing %s's config disk: %w", s.node, err)
	}
	_ = os.Remove(path)
	return run(ctx, log, "mkfs.ext4", "-q", "-L", "skyhook-node", "-d", dir, path, "16M")
}

// gatewayHostPort is host:port with the host replaced by the gateway.
func gatewayHostPort(hostPort, gateway string) (string, error) {
	_, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(gateway, port), nil
}
