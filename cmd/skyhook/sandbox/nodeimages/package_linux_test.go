package nodeimages

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// The stage pod's copy command, run with the package image's busybox,
// copies the package to the host directory.
func TestPackageCopyCommand(t *testing.T) {
	needRoot(t)
	spec := testPackage(t, "1.0.0")
	img, err := Package(spec)
	if err != nil {
		t.Fatal(err)
	}
	root := containerRoot(t, img)
	// As reconcile/stagepod writes it, with the host's root at /root.
	const copyDir = "/root/var/lib/skyhook/demo/tuning/1.0.0/1"
	cmd := exec.Command("/bin/sh", "-c", "mkdir -p "+copyDir+" && cp -r /skyhook-package/. "+copyDir+"/")
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = cfg.Config.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	got, err := os.ReadFile(filepath.Join(root, copyDir, "config.json"))
	if err != nil || string(got) != string(spec.Config) {
		t.Errorf("copied config.json: %q, %v", got, err)
	}
	info, err := os.Stat(filepath.Join(root, copyDir, "skyhook_dir", "apply", "write.sh"))
	if err != nil || info.Mode().Perm()&0o111 == 0 {
		t.Errorf("copied step: %v, %v; want an executable", info, err)
	}
}
