package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
)

// The tests chroot into a small root filesystem built from Debian's
// busybox-static, fetched once with apt-get and kept in the user cache
// (nodeimages.Busybox). They need root (chroot) and Debian's package tools,
// as CI has.

// busybox returns the path of a static busybox binary.
func busybox(t testing.TB) string {
	t.Helper()
	path, err := nodeimages.Busybox(context.Background(), nil)
	if err != nil {
		t.Fatalf("a static busybox for the test root: %v", err)
	}
	return path
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
