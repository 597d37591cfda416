package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skyhook-go/skyhook/agent/modelog"
	"github.com/skyhook-go/skyhook/agent/run"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
)

// twoModes is a package whose apply writes a file when GOOD is set and
// fails with 5 otherwise, and whose check fails with 4 when the file is
// missing or says "bad".
const twoModes = `{"schema_version":"v1","package_name":"pair","package_version":"1.0.0","modes":{
 "apply":[{"name":"write","path":"write.sh"}],
 "apply-check":[{"name":"look","path":"look.sh"}]}}`

// hostWithPackage is a host root (busybox as /bin/sh, for the chroot) with
// the package copied in, and the options of a run of it.
func hostWithPackage(t *testing.T, out *bytes.Buffer, env ...string) run.Options {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the agent chroots and its tests must run as root")
	}
	busybox, err := nodeimages.Busybox(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	copyDir := filepath.Join(root, "var/lib/skyhook/demo/pair/1.0.0/1")
	files := map[string]string{
		"bin/busybox":                                   "",
		copyDir[len(root)+1:] + "/config.json":          twoModes,
		copyDir[len(root)+1:] + "/skyhook_dir/write.sh": "#!/bin/sh\n[ -n \"$GOOD\" ] || { echo no good; exit 5; }\necho \"$GOOD\" > /etc/pair\necho wrote\n",
		copyDir[len(root)+1:] + "/skyhook_dir/look.sh":  "#!/bin/sh\ngrep -qx good /etc/pair || { echo looks bad; exit 4; }\necho looks good\n",
	}
	for path, content := range files {
		full := filepath.Join(root, path)
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		if path == "bin/busybox" {
			data, err := os.ReadFile(busybox)
			must(t, err)
			content = string(data)
		}
		must(t, os.WriteFile(full, []byte(content), 0o755))
	}
	for _, tool := range []string{"sh", "echo", "grep"} {
		must(t, os.Symlink("busybox", filepath.Join(root, "bin", tool)))
	}
	must(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	return run.Options{HostRoot: root, CopyDir: copyDir, Skyhook: "demo", Package: "pair", Version: "1.0.0", Generation: "1",
		Env: append([]string{"PATH=/bin"}, env...), Out: out}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// terminationLog is an empty file standing in for /dev/termination-log.
func terminationLog(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "termination-log")
	must(t, os.WriteFile(path, nil, 0o644))
	return path
}

// A stage and its check in one container: each mode's part of the log
// after its marker, exit 0, no termination message.
func TestModeListRunsTheStageThenItsCheck(t *testing.T) {
	var out bytes.Buffer
	o := hostWithPackage(t, &out, "GOOD=good")
	message := terminationLog(t)
	if code := runModes(context.Background(), o, []string{"apply", "apply-check"}, message); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, out.String())
	}
	apply, ok := modelog.Of(out.String(), "apply")
	check, checked := modelog.Of(out.String(), "apply-check")
	if !ok || !checked || !strings.Contains(apply, "wrote") || !strings.Contains(check, "looks good") || strings.Contains(apply, "looks good") {
		t.Errorf("the log's parts: apply %q (%v), apply-check %q (%v)\n%s", apply, ok, check, checked, out.String())
	}
	if data, _ := os.ReadFile(message); len(data) != 0 {
		t.Errorf("a run that passed left a termination message: %q", data)
	}
}

// A check that fails fails the container with the check's exit code, and
// the termination message (which the operator's record quotes) names the
// check.
func TestAFailedCheckGivesItsExitCodeAndNamesItself(t *testing.T) {
	var out bytes.Buffer
	o := hostWithPackage(t, &out, "GOOD=bad")
	message := terminationLog(t)
	if code := runModes(context.Background(), o, []string{"apply", "apply-check"}, message); code != 4 {
		t.Fatalf("exit %d, want the check's 4\n%s", code, out.String())
	}
	if data, _ := os.ReadFile(message); !strings.HasPrefix(string(data), "apply-check failed: ") {
		t.Errorf("termination message %q, want it to name the check", data)
	}
	if check, _ := modelog.Of(out.String(), "apply-check"); !strings.Contains(check, "looks bad") {
		t.Errorf("the check's part %q, want its output", check)
	}
}

// A stage that fails ends the run: its check does not run.
func TestAFailedStageEndsTheRunBeforeItsCheck(t *testing.T) {
	var out bytes.Buffer
	o := hostWithPackage(t, &out)
	message := terminationLog(t)
	if code := runModes(context.Background(), o, []string{"apply", "apply-check"}, message); code != 5 {
		t.Fatalf("exit %d, want the step's 5\n%s", code, out.String())
	}
	if _, ran := modelog.Of(out.String(), "apply-check"); ran {
		t.Errorf("the check ran after its stage failed:\n%s", out.String())
	}
	if data, _ := os.ReadFile(message); !strings.HasPrefix(string(data), "apply failed: ") {
		t.Errorf("termination message %q, want it to name apply", data)
	}
}

// One mode alone keeps the agent's shape: no marker, exit 1 on failure.
func TestOneModeKeepsNoMarkerAndExitOne(t *testing.T) {
	var out bytes.Buffer
	o := hostWithPackage(t, &out)
	if code := runModes(context.Background(), o, []string{"apply"}, terminationLog(t)); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if parts := modelog.Split(out.String()); len(parts) != 1 || parts[0].Mode != "" {
		t.Errorf("one mode's log has markers: %#v", parts)
	}
}

func TestModeList(t *testing.T) {
	for arg, want := range map[string]string{
		"apply":             "",
		"apply,apply-check": "",
		"apply,,config":     "an empty mode",
		"interrupt,apply":   "interrupt runs alone",
		",":                 "an empty mode",
	} {
		_, err := modeList(arg)
		if (err == nil) != (want == "") || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("modeList(%q) = %v, want %q", arg, err, want)
		}
	}
}
