package vmnode

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodenet"
)

// testSeed is a seed for slot 1 of network 3, with a kubeconfig, a CA and
// a serving certificate written to files as the cluster writes them.
func testSeed(t *testing.T) seed {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthorityData: []byte("CA")}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: []byte("CERT"), ClientKeyData: []byte("KEY")}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "admin"}
	cfg.CurrentContext = "local"
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	ca, crt, key := write("ca.crt", "the CA"), write("kubelet.crt", "the cert"), write("kubelet.key", "the key")
	att := nodenet.PlannedAttachment(3, 1)
	return seed{
		node: "vm-1", labels: "type=vm", att: att, gateway: "10.213.3.1:6443", pause: "127.0.0.1:5000/pause:1",
		registries: map[string]string{"127.0.0.1:5000": "10.213.3.1:5000"},
		cp: kubeletnode.ControlPlane{Kubeconfig: kubeconfig, CAFile: ca,
			KubeletServingCert: func(string, netip.Addr) (string, string, error) { return crt, key, nil }},
	}
}

// The config disk names the node, addresses it, routes it to every other
// slot's pods, points the kubelet at the apiserver through the gateway
// (checked for the name in the apiserver's certificate) and containerd at
// the registries through the gateway.
func TestConfigDiskMakesTheMachineThisNode(t *testing.T) {
	s := testSeed(t)
	dir := t.TempDir()
	if err := s.write(dir); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	setup := read("setup.sh")
	for _, want := range []string{"hostname vm-1", "ip addr replace 10.213.3.3/24 dev eth0",
		"ip route replace 10.214.12.0/24 via 10.213.3.2", "ip route replace 10.214.14.0/24 via 10.213.3.4", "ip route replace 10.214.15.0/24 via 10.213.3.5"} {
		if !strings.Contains(setup, want) {
			t.Errorf("setup.sh lacks %q:\n%s", want, setup)
		}
	}
	if strings.Contains(setup, "10.214.13.0/24") {
		t.Errorf("setup.sh routes the node's own pods away:\n%s", setup)
	}
	cfg, err := clientcmd.Load([]byte(read("kubeconfig")))
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Clusters["local"]
	if c.Server != "https://10.213.3.1:6443" || c.TLSServerName != "kubernetes" || string(c.CertificateAuthorityData) != "CA" {
		t.Errorf("the guest's kubeconfig has %s, server name %q, CA %q; want the gateway, kubernetes, the CA", c.Server, c.TLSServerName, c.CertificateAuthorityData)
	}
	if hosts := read("registries/127.0.0.1:5000/hosts.toml"); !strings.Contains(hosts, `"http://10.213.3.1:5000"`) {
		t.Errorf("containerd pulls 127.0.0.1:5000 from:\n%s", hosts)
	}
	if env := read("kubelet.env"); !strings.Contains(env, "--node-ip=10.213.3.3") || !strings.Contains(env, "--hostname-override=vm-1") {
		t.Errorf("kubelet.env: %s", env)
	}
	if got := read("pki/kubelet.key"); got != "the key" {
		t.Errorf("the serving key is %q", got)
	}
	if cni := read("cni/10-node.conflist"); !strings.Contains(cni, `"10.214.13.0/24"`) {
		t.Errorf("the pods' range is not the node's: %s", cni)
	}
}
