package vmnode

import (
	"context"
	"os"
	"path/filepath"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
)

// What the image holds besides Debian's packages: systemd units that set
// the node up from its config disk and run containerd, the kubelet and
// kube-proxy. Everything that differs between nodes (name, address,
// certificates, the apiserver's address) is on the config disk (see
// seed.go), so one image serves every node and every cluster.

// configDir is where the node's config disk is mounted in the guest.
const configDir = "/etc/skyhook-node"

// guestFile is a file of the image: content and mode, or a symlink.
type guestFile struct {
	content string
	mode    os.FileMode
	link    string
}

func unit(content string) guestFile { return guestFile{content: content, mode: 0o644} }

// wanted enables a unit as `systemctl enable` would.
func wanted(name string) (string, guestFile) {
	return "/etc/systemd/system/multi-user.target.wants/" + name, guestFile{link: "/etc/systemd/system/" + name}
}

// masked disables a unit that a test machine does not want: it wakes up
// on a timer, costs CPU under emulation and changes nothing a test reads.
func masked(name string) (string, guestFile) {
	return "/etc/systemd/system/" + name, guestFile{link: "/dev/null"}
}

func guestFiles() map[string]guestFile {
	files := map[string]guestFile{
		"/etc/fstab": unit("/dev/vda / ext4 rw,errors=remount-ro 0 1\n" +
			"/dev/vdb " + configDir + " ext4 ro,nofail 0 0\n"),
		"/etc/systemd/system/skyhook-node.service": unit(`[Unit]
Description=Skyhook node setup: name, address and routes from the config disk
RequiresMountsFor=` + configDir + `
Before=containerd.service kubelet.service kube-proxy.service
After=local-fs.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh ` + configDir + `/setup.sh

[Install]
WantedBy=multi-user.target
`),
		"/etc/systemd/system/containerd.service.d/10-skyhook.conf": unit(`[Unit]
After=skyhook-node.service
Requires=skyhook-node.service

[Service]
ExecStart=
ExecStart=/usr/bin/containerd --config ` + configDir + `/containerd.toml
`),
		"/etc/systemd/system/kubelet.service": unit(`[Unit]
Description=kubelet
After=containerd.service skyhook-node.service
Requires=containerd.service skyhook-node.service

[Service]
EnvironmentFile=` + configDir + `/kubelet.env
ExecStart=/usr/local/bin/kubelet $KUBELET_ARGS
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
`),
		"/etc/systemd/system/kube-proxy.service": unit(`[Unit]
Description=kube-proxy
After=skyhook-node.service
Requires=skyhook-node.service

[Service]
ExecStart=/usr/local/bin/kube-proxy --config=` + configDir + `/kube-proxy.yaml --v=2
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
`),
		// A service with nothing to do but run, for packages whose
		// interrupt restarts a real unit (the tests read its main PID and
		// ActiveEnterTimestamp).
		"/etc/systemd/system/skyhook-demo.service": unit(`[Unit]
Description=A service that Skyhook packages restart

[Service]
ExecStart=/bin/sleep infinity

[Install]
WantedBy=multi-user.target
`),
	}
	// Units that fail, and systemd's own errors, reach the serial
	// console (ConsoleLog), the one place a test can read a machine whose
	// kubelet does not come up.
	files["/etc/systemd/journald.conf.d/10-skyhook.conf"] = unit("[Journal]\nForwardToConsole=yes\nMaxLevelConsole=err\nTTYPath=/dev/ttyS0\n")
	for _, name := range []string{"skyhook-node.service", "kubelet.service", "kube-proxy.service", "skyhook-demo.service"} {
		path, f := wanted(name)
		files[path] = f
	}
	for _, name := range []string{"apt-daily.timer", "apt-daily-upgrade.timer", "e2scrub_all.timer", "e2scrub_reap.service", "fstrim.timer"} {
		path, f := masked(name)
		files[path] = f
	}
	return files
}

// nodeImageRecipe is the node image: this machine's Debian release from
// its APT sources, the packages, the units, and the kubelet and
// kube-proxy the project builds (the real nodes' versions).
func nodeImageRecipe(ctx context.Context, bin binaries.Options) (imageRecipe, error) {
	suite, err := debianSuite()
	if err != nil {
		return imageRecipe{}, err
	}
	sources, err := aptSources()
	if err != nil {
		return imageRecipe{}, err
	}
	kubelet, err := binaries.EnsureKubelet(ctx, bin)
	if err != nil {
		return imageRecipe{}, err
	}
	kubeProxy, err := binaries.EnsureKubeProxy(ctx, bin)
	if err != nil {
		return imageRecipe{}, err
	}
	return imageRecipe{
		suite: suite, sources: sources, packages: imagePackages, files: guestFiles(),
		binaries: map[string]string{"/usr/local/bin/kubelet": kubelet, "/usr/local/bin/kube-proxy": kubeProxy},
	}, nil
}

// writeGuestFile writes f at path under root.
func writeGuestFile(root, path string, f guestFile) error {
	full := filepath.Join(root, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	_ = os.Remove(full)
	if f.link != "" {
		return os.Symlink(f.link, full)
	}
	return os.WriteFile(full, []byte(f.content), f.mode)
}
