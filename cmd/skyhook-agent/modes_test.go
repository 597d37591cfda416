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
	data, err := os.ReadFile(busybox)
	must(t, err)
	files := map[string]string{
		filepath.Join(root, "bin/busybox"):                string(data),
		filepath.Join(copyDir, "config.json"):             twoModes,
		filepath.Join(copyDir, "skyhook_dir", "write.sh"): "#!/bin/sh\n[ -n \"$GOOD\" ] || { echo no good; exit 5; }\necho \"$GOOD\" > /etc/pair\necho wrote\n",
		filepath.Join(copyDir, "skyhook_dir", "look.sh"):  "#!/bin/sh\ngrep -qx good /etc/pair || { echo looks bad; exit 4; }\necho looks good\n",
	}
	for path, content := range files {
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, []byte(content), 0o755))
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

// runPair runs apply then apply-check of the package with the extra
// environment given, and returns the exit code, the log and the
// termination message the run left (its file starts empty, as the
// kubelet's /dev/termination-log does).
func runPair(t *testing.T, modes []string, env ...string) (code int, log, message string) {
	t.Helper()
	var out bytes.Buffer
	o := hostWithPackage(t, &out, env...)
	path := filepath.Join(t.TempDir(), "termination-log")
	must(t, os.WriteFile(path, nil, 0o644))
	code = runModes(context.Background(), o, modes, path)
	data, err := os.ReadFile(path)
	must(t, err)
	return code, out.String(), string(data)
}

var stageAndCheck = []string{"apply", "apply-check"}

// A stage and its check in one container: each mode's part of the log
// after its marker, exit 0, no termination message.
func TestModeListRunsTheStageThenItsCheck(t *testing.T) {
	code, log, message := runPair(t, stageAndCheck, "GOOD=good")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, log)
	}
	apply, ok := modelog.Of(log, "apply")
	check, checked := modelog.Of(log, "apply-check")
	if !ok || !checked || !strings.Contains(apply, "wrote") || !strings.Contains(check, "looks good") || strings.Contains(apply, "looks good") {
		t.Errorf("the log's parts: apply %q (%v), apply-check %q (%v)\n%s", apply, ok, check, checked, log)
	}
	if message != "" {
		t.Errorf("a run that passed left a termination message: %q", message)
	}
}

// A check that fails fails the container with the check's exit code, and
// the termination message (which the operator's record quotes) names the
// check.
func TestAFailedCheckGivesItsExitCodeAndNamesItself(t *testing.T) {
	code, log, message := runPair(t, stageAndCheck, "GOOD=bad")
	if code != 4 {
		t.Fatalf("exit %d, want the check's 4\n%s", code, log)
	}
	if !strings.HasPrefix(message, "apply-check failed: ") {
		t.Errorf("termination message %q, want it to name the check", message)
	}
	if check, _ := modelog.Of(log, "apply-check"); !strings.Contains(check, "looks bad") {
		t.Errorf("the check's part %q, want its output", check)
	}
}

// A stage that fails ends the run: its check does not run.
func TestAFailedStageEndsTheRunBeforeItsCheck(t *testing.T) {
	code, log, message := runPair(t, stageAndCheck)
	if code != 5 {
		t.Fatalf("exit %d, want the step's 5\n%s", code, log)
	}
	if _, ran := modelog.Of(log, "apply-check"); ran {
		t.Errorf("the check ran after its stage failed:\n%s", log)
	}
	if !strings.HasPrefix(message, "apply failed: ") {
		t.Errorf("termination message %q, want it to name apply", message)
	}
}

// One mode alone keeps the agent's shape: no marker, exit 1 on failure,
// no termination message.
func TestOneModeKeepsNoMarkerAndExitOne(t *testing.T) {
	code, log, message := runPair(t, []string{"apply"})
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if parts := modelog.Split(log); len(parts) != 1 || parts[0].Mode != "" || message != "" {
		t.Errorf("one mode's log has markers %#v or a termination message %q", parts, message)
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
