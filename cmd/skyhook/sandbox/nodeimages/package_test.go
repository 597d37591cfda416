package nodeimages

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skyhook-go/skyhook/agent/pkgconfig"
)

// testPackage is a ShellPackage with an apply step and its check, and a
// root_dir file.
func testPackage(t *testing.T, version string) PackageSpec {
	t.Helper()
	spec, err := ShellPackage(testBusybox(t), "tuning", version, map[string][]ShellStep{
		"apply":       {{Name: "write", Script: "echo applied > /etc/tuning.applied\n"}},
		"apply-check": {{Name: "check", Script: "test -f /etc/tuning.applied\n"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	spec.Files["root_dir/etc/tuning.conf"] = File{Content: []byte("version=" + version + "\n")}
	return spec
}

// The package image holds busybox with /bin/sh linked to it, and the
// package under /skyhook-package: config.json as given, the files with
// their modes (0644 when unset).
func TestPackageLayout(t *testing.T) {
	spec := testPackage(t, "1.0.0")
	img, err := Package(spec)
	if err != nil {
		t.Fatal(err)
	}
	headers, contents := files(t, img)
	if sh := headers["bin/sh"]; sh == nil || sh.Linkname != "busybox" {
		t.Errorf("bin/sh: %+v, want a link to busybox", sh)
	}
	if got := contents["skyhook-package/config.json"]; !bytes.Equal(got, spec.Config) {
		t.Errorf("config.json:\n%s\nwant:\n%s", got, spec.Config)
	}
	for name, want := range map[string]fs.FileMode{
		"skyhook-package/skyhook_dir/apply/write.sh": 0o755,
		"skyhook-package/root_dir/etc/tuning.conf":   0o644,
	} {
		if hdr := headers[name]; hdr == nil || fs.FileMode(hdr.Mode).Perm() != want {
			t.Errorf("%s: %+v, want mode %v", name, hdr, want)
		}
	}
	if got := string(contents["skyhook-package/skyhook_dir/apply/write.sh"]); !strings.HasPrefix(got, "#!/bin/sh\n") {
		t.Errorf("write.sh has no #!/bin/sh line:\n%s", got)
	}
}

// The same spec gives the same digest; another file gives another.
func TestPackageIsDeterministic(t *testing.T) {
	a, err := Package(testPackage(t, "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Package(testPackage(t, "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Package(testPackage(t, "1.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	if da, db := digest(t, a), digest(t, b); da != db {
		t.Errorf("digests %s and %s from the same spec", da, db)
	}
	if digest(t, a) == digest(t, c) {
		t.Error("versions 1.0.0 and 1.0.1 have the same digest")
	}
}

// The extracted package is valid for the agent's checker, step files
// included.
func TestShellPackageIsValidForTheAgent(t *testing.T) {
	img, err := Package(testPackage(t, "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(extract(t, img), PackageDir)
	var report strings.Builder
	if !pkgconfig.Report(&report, dir, true) {
		t.Errorf("the package is not valid:\n%s", report.String())
	}
	// The checker does look at the files: without the step, it objects.
	if err := os.Remove(filepath.Join(dir, "skyhook_dir", "apply", "write.sh")); err != nil {
		t.Fatal(err)
	}
	if pkgconfig.Report(&report, dir, true) {
		t.Error("valid without its apply step's file")
	}
}

// ShellPackage refuses what the agent would: an action mode without its
// check mode.
func TestShellPackageChecksTheConfig(t *testing.T) {
	_, err := ShellPackage(testBusybox(t), "tuning", "1.0.0", map[string][]ShellStep{
		"apply": {{Name: "write", Script: "true"}},
	})
	if err == nil || !strings.Contains(err.Error(), "apply-check") {
		t.Errorf("error %v, want one about the missing apply-check mode", err)
	}
}

// Package refuses paths outside /skyhook-package, a second config.json
// and no config.json.
func TestPackageRefuses(t *testing.T) {
	bb := testBusybox(t)
	for name, spec := range map[string]PackageSpec{
		"escaping path":     {Busybox: bb, Config: []byte("{}"), Files: map[string]File{"../etc/passwd": {}}},
		"absolute path":     {Busybox: bb, Config: []byte("{}"), Files: map[string]File{"/etc/passwd": {}}},
		"config.json twice": {Busybox: bb, Config: []byte("{}"), Files: map[string]File{"config.json": {}}},
		"file and dir":      {Busybox: bb, Config: []byte("{}"), Files: map[string]File{"a": {}, "a/b": {}}},
		"no config":         {Busybox: bb},
		"no busybox":        {Config: []byte("{}")},
	} {
		if _, err := Package(spec); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
