package kubeletnode

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
)

// kube-proxy's health and metrics ports, on the namespace's own loopback
// (each node has its own, so they never clash).
const (
	proxyHealthzAddr = "127.0.0.1:10256"
	proxyMetricsAddr = "127.0.0.1:10249"
)

// startKubeProxy starts kube-proxy (iptables mode, the machine's
// iptables, in the node's namespace) so that the node's pods reach
// Services by their cluster IPs, the kubernetes Service included, and
// waits until it serves its health check. Only a node on a network runs
// it: alone on its loopback, a node's pods have nothing to reach.
func (n *Node) startKubeProxy(ctx context.Context, cp ControlPlane) error {
	binary, err := binaries.EnsureKubeProxy(ctx, n.bin)
	if err != nil {
		return err
	}
	config, err := n.writeKubeProxyConfig(cp)
	if err != nil {
		return err
	}
	if err := n.ns.do(func() (err error) {
		n.kubeProxy, err = proc.Start(n.clusterDir, "kube-proxy-"+n.Name, binary, "--config="+config, "--v=2")
		return err
	}); err != nil {
		return err
	}
	n.KubeProxyLog = n.kubeProxy.LogFile()
	inNamespace := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return n.ns.dial(ctx, addr) },
	}}
	return n.kubeProxy.WaitHTTP(ctx, inNamespace, "http://"+proxyHealthzAddr+"/healthz", time.Minute)
}

// writeKubeProxyConfig writes the KubeProxyConfiguration. What this
// machine needs: conntrack left as it is (its limits are the machine's,
// not the namespace's, and this process may not set them), no
// oom_score_adj below the harness's own (it lacks CAP_SYS_RESOURCE, as for
// containerd), and local traffic told by the network's pod ranges.
func (n *Node) writeKubeProxyConfig(cp ControlPlane) (string, error) {
	cfg := kubeproxyv1alpha1.KubeProxyConfiguration{
		TypeMeta:           metav1.TypeMeta{APIVersion: "kubeproxy.config.k8s.io/v1alpha1", Kind: "KubeProxyConfiguration"},
		HostnameOverride:   n.Name,
		BindAddress:        n.Address.String(),
		HealthzBindAddress: proxyHealthzAddr,
		MetricsBindAddress: proxyMetricsAddr,
		Mode:               "iptables",
		DetectLocalMode:    "ClusterCIDR",
		ClusterCIDR:        n.attachment.NetworkPods.String(),
		OOMScoreAdj:        ptr.To[int32](0),
		Conntrack: kubeproxyv1alpha1.KubeProxyConntrackConfiguration{
			MaxPerCore:            ptr.To[int32](0),
			Min:                   ptr.To[int32](0),
			TCPEstablishedTimeout: &metav1.Duration{},
			TCPCloseWaitTimeout:   &metav1.Duration{},
		},
	}
	cfg.ClientConnection.Kubeconfig = cp.Kubeconfig
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(n.Dir, "kube-proxy.yaml")
	if err := writeFile(path, string(data)); err != nil {
		return "", fmt.Errorf("writing kube-proxy's configuration: %w", err)
	}
	return path, nil
}
