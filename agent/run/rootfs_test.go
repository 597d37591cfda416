package run

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The tests chroot into a small root filesystem built from Debian's
// busybox-static, fetched once with apt-get and kept in the user cache.
// They need root (chroot) and Debian's package tools, as CI has.

var (
	busyboxOnce sync.Once
	busyboxPath string
	busyboxErr  error
)

// busybox returns the path of a static busybox binary.
func busybox(t testing.TB) string {
	t.Helper()
	busyboxOnce.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			busyboxErr = err
			return
		}
		dir := filepath.Join(cache, "skyhook", "busybox-static")
		busyboxPath = filepath.Join(dir, "bin", "busybox")
		if _, err := os.Stat(busyboxPath); err == nil {
			return
		}
		download, err := os.MkdirTemp("", "busybox-deb-")
		if err != nil {
			busyboxErr = err
			return
		}
		defer os.RemoveAll(download)
		get := func() ([]byte, error) {
			cmd := exec.Command("apt-get", "download", "busybox-static")
			cmd.Dir = download
			return cmd.CombinedOutput()
		}
		if _, err := get(); err != nil {
			// A machine whose package lists were never fetched: fetch them.
			if out, err := exec.Command("apt-get", "update", "-qq").CombinedOutput(); err != nil {
				busyboxErr = fmt.Errorf("apt-get update: %v: %s", err, out)
				return
			}
			if out, err := get(); err != nil {
				busyboxErr = fmt.Errorf("apt-get download busybox-static: %v: %s", err, out)
				return
			}
		}
		debs, _ := filepath.Glob(filepath.Join(download, "busybox-static_*.deb"))
		if len(debs) != 1 {
			busyboxErr = fmt.Errorf("apt-get download left %v", debs)
			return
		}
		extracted := filepath.Join(download, "x")
		if out, err := exec.Command("dpkg-deb", "-x", debs[0], extracted).CombinedOutput(); err != nil {
			busyboxErr = fmt.Errorf("dpkg-deb -x: %v: %s", err, out)
			return
		}
		data, err := os.ReadFile(filepath.Join(extracted, "bin", "busybox"))
		if err != nil {
			busyboxErr = err
			return
		}
		if err := os.MkdirAll(filepath.Dir(busyboxPath), 0o755); err != nil {
			busyboxErr = err
			return
		}
		tmp := busyboxPath + ".tmp"
		if err := os.WriteFile(tmp, data, 0o755); err != nil {
			busyboxErr = err
			return
		}
		busyboxErr = os.Rename(tmp, busyboxPath)
	})
	if busyboxErr != nil {
		t.Fatalf("a static busybox for the test root: %v", busyboxErr)
	}
	return busyboxPath
}

// fakeSystemctl stands in for the host's systemctl: it records its
// arguments and lists two running services.
const fakeSystemctl = `#!/bin/sh
echo "$@" >> /var/log/systemctl.calls
if [ "$1" = list-units ]; then
  echo "containerd.service loaded active running containerd"
  echo "kubelet.service loaded active running kubelet"
fi
`

// newRoot makes a host root with busybox as /bin/sh and friends, and a fake
// systemctl.
func newRoot(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the agent tests chroot and must run as root")
	}
	root := t.TempDir()
	for _, dir := range []string{"bin", "usr/bin", "etc", "tmp", "var/log"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(busybox(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"sh", "cat", "echo", "printf", "env", "test", "touch", "ls", "mkdir", "rm", "true", "false", "grep", "wc"} {
		if err := os.Symlink("busybox", filepath.Join(root, "bin", tool)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "usr", "bin", "systemctl"), []byte(fakeSystemctl), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// pkg is a package laid out in a host root.
type pkg struct {
	root, copyDir string
}

// newPackage writes a package (config.json, step scripts, root_dir files)
// into the host root under the copy directory the operator would use.
func newPackage(t testing.TB, root, version, config string, scripts, rootDir map[string]string) pkg {
	t.Helper()
	copyDir := filepath.Join(root, "var", "lib", "skyhook", "demo", "tuning", version, "1")
	write := func(path, content string, mode os.FileMode) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(copyDir, "config.json"), strings.ReplaceAll(config, "VERSION", version), 0o644)
	for name, body := range scripts {
		write(filepath.Join(copyDir, "skyhook_dir", name), "#!/bin/sh\n"+body, 0o755)
	}
	for name, body := range rootDir {
		write(filepath.Join(copyDir, "root_dir", name), body, 0o644)
	}
	return pkg{root: root, copyDir: copyDir}
}
