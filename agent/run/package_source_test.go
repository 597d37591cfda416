package run

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A pod that mounts the package image (an image volume) has no copy
// container: the agent copies the mounted files to the package's
// directory on the host, and the steps run from there as after a copy.
func TestPackageMountedInThePodIsCopiedToTheHostFirst(t *testing.T) {
	root := newRoot(t)
	// Lay the package out as the image volume shows it, then move it out
	// of the host root: the host has no copy yet.
	p := newPackage(t, root, "1.0.0", config, scripts, map[string]string{"etc/tuning.conf": "x=1\n"})
	mount := filepath.Join(t.TempDir(), "skyhook-package")
	if err := os.Rename(p.copyDir, mount); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := options(p, "apply", "1.0.0", "1", &out)
	o.PackageSource = mount
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatalf("apply from the mounted package: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "[agent] copied the package from "+mount+" to "+p.copyDir) {
		t.Errorf("the pod log does not say the package was copied:\n%s", out.String())
	}
	if read(t, root, "etc/tuning.conf") != "x=1\n" {
		t.Error("root_dir was not copied over the host root")
	}
	info, err := os.Stat(filepath.Join(p.copyDir, "skyhook_dir", "write.sh"))
	if err != nil || info.Mode().Perm()&0o100 == 0 {
		t.Errorf("the host copy's write.sh: %v, mode %v; want it copied, executable", err, info)
	}
	o.Mode = "apply-check"
	if _, err := Run(context.Background(), o); err != nil {
		t.Errorf("apply-check from the mounted package: %v", err)
	}
}

// A mount that holds no package (an image whose files are not under
// /skyhook-package) fails the mode before any step, naming the path.
func TestMountedPackageWithoutConfigFails(t *testing.T) {
	root := newRoot(t)
	p := newPackage(t, root, "1.0.0", config, scripts, nil)
	empty := t.TempDir()
	var out bytes.Buffer
	o := options(p, "apply", "1.0.0", "1", &out)
	o.PackageSource = empty
	results, err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), empty) || !strings.Contains(err.Error(), "config.json") {
		t.Fatalf("err = %v; want one naming %s and config.json", err, empty)
	}
	if len(results) != 0 {
		t.Errorf("steps ran: %+v", results)
	}
}
