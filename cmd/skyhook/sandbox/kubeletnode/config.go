package kubeletnode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodenet"
)

// writeContainerdConfig writes containerd's configuration (every path under
// the node's directory), the CNI network and a hosts.toml per registry.
//
// restrict_oom_score_adj: this machine's processes lack CAP_SYS_RESOURCE,
// so the kubelet's request to give sandboxes an oom_score_adj of -998 would
// make runc fail ("can't get final child's PID from pipe"); with it,
// containerd never sets a score below its own.
func (n *Node) writeContainerdConfig() (string, error) {
	cniBin, err := cniBinDir()
	if err != nil {
		return "", err
	}
	cniConf := filepath.Join(n.Dir, "cni")
	hostsDir := filepath.Join(n.Dir, "registries")
	for _, r := range n.opts.Registries {
		hosts := fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", "http://"+r, "http://"+r)
		if err := writeFile(filepath.Join(hostsDir, r, "hosts.toml"), hosts); err != nil {
			return "", err
		}
	}
	// A bridge network inside the node's namespace, so the node reports
	// NetworkReady and pods that are not on the host network get an
	// address: from the node's range on a network (routed to from the
	// other nodes), else from one that only this node reaches. The stage
	// pods use the host network and never join it. As the gateway, the
	// plugin turns on forwarding in the namespace.
	subnet := "10.88.0.0/16"
	if n.attachment != nil {
		subnet = n.attachment.Pods.String()
	}
	network := nodenet.BridgeCNIConfig("skyhook-real-node", subnet)
	if err := writeFile(filepath.Join(cniConf, "10-skyhook.conflist"), network); err != nil {
		return "", err
	}
	config := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

%[6]s`, filepath.Join(n.Dir, "containerd", "root"), filepath.Join(n.Dir, "containerd", "state"),
		n.ContainerdSocket, n.ContainerdSocket+".ttrpc", filepath.Join(n.Dir, "containerd", "opt"),
		CRIConfig(CRI{Pause: n.opts.PauseImage, CNIBin: cniBin, CNIConf: cniConf, Registries: hostsDir, SharedHost: true}))
	path := filepath.Join(n.Dir, "containerd.toml")
	return path, writeFile(path, config)
}

// writeKubeletConfig writes the KubeletConfiguration. What this machine
// needs (see docs/testing.md, "The real node"): cgroupfs without systemd,
// cgroup v1 accepted, no QoS cgroups or node allocatable enforcement (no
// systemd slices to put them in), swap tolerated. Every directory the
// kubelet writes is under the node's; it serves its API where serving
// says, trusting the cluster CA for the apiserver's client certificate.
// Eviction thresholds are low so a nearly full CI disk does not evict the
// stage pods.
func (n *Node) writeKubeletConfig(cp ControlPlane, serving kubeletServing) (string, error) {
	cfg := kubeletv1beta1.KubeletConfiguration{
		TypeMeta:                    metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		Address:                     serving.address,
		Port:                        int32(serving.port),
		HealthzBindAddress:          "127.0.0.1",
		TLSCertFile:                 serving.certFile,
		TLSPrivateKeyFile:           serving.keyFile,
		Authentication:              kubeletv1beta1.KubeletAuthentication{Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)}, Webhook: kubeletv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(false)}, X509: kubeletv1beta1.KubeletX509Authentication{ClientCAFile: cp.CAFile}},
		Authorization:               kubeletv1beta1.KubeletAuthorization{Mode: kubeletv1beta1.KubeletAuthorizationModeAlwaysAllow},
		CgroupDriver:                "cgroupfs",
		CgroupsPerQOS:               ptr.To(false),
		EnforceNodeAllocatable:      []string{},
		FailCgroupV1:                ptr.To(false),
		FailSwapOn:                  ptr.To(false),
		ContainerRuntimeEndpoint:    "unix://" + n.ContainerdSocket,
		PodLogsDir:                  filepath.Join(n.Dir, "pod-logs"),
		VolumePluginDir:             filepath.Join(n.Dir, "volume-plugins"),
		EvictionHard:                map[string]string{"memory.available": "50Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
		ImageGCHighThresholdPercent: ptr.To[int32](100),
		ImageGCLowThresholdPercent:  ptr.To[int32](99),
		// Pod status reaches the operator sooner than with the defaults.
		NodeStatusUpdateFrequency: metav1.Duration{Duration: 10e9},
		SyncFrequency:             metav1.Duration{Duration: 10e9},
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	// The typed field drops an empty list (omitempty), which the kubelet
	// reads as its default ["pods"]; the empty list has to be written.
	var fields map[string]any
	if err := yaml.Unmarshal(data, &fields); err != nil {
		return "", err
	}
	fields["enforceNodeAllocatable"] = []string{}
	if data, err = yaml.Marshal(fields); err != nil {
		return "", err
	}
	path := filepath.Join(n.Dir, "kubelet.yaml")
	return path, writeFile(path, string(data))
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(strings.TrimLeft(content, "\n")), 0o644)
}

// CRI is what containerd's CRI plugin needs to run a node's pods.
type CRI struct {
	// Pause is the sandbox image; Registries the directory of
	// containerd's hosts.toml files.
	Pause, Registries string
	// CNIBin and CNIConf are the CNI plugins' and configurations'
	// directories.
	CNIBin, CNIConf string
	// SystemdCgroup puts pods under systemd's slices (a machine whose
	// PID 1 is systemd); else cgroupfs.
	SystemdCgroup bool
	// SharedHost is a node sharing this machine with others: its
	// streaming server stays on loopback on a free port, and it leaves
	// the OOM score adjustment of this machine's processes alone.
	SharedHost bool
}

// CRIConfig is the CRI plugin's section of containerd's configuration
// (version 2): overlayfs, runc, the CNI and registry directories.
func CRIConfig(c CRI) string {
	shared := ""
	if c.SharedHost {
		shared = "  restrict_oom_score_adj = true\n  stream_server_address = \"127.0.0.1\"\n  stream_server_port = \"0\"\n"
	}
	return fmt.Sprintf(`[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
%s  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = %t
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %q
`, c.Pause, shared, c.SystemdCgroup, c.CNIBin, c.CNIConf, c.Registries)
}
