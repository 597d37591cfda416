package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skyhook-go/skyhook/test/testenv"
)

func writePackage(t *testing.T, config string, executable bool) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "skyhook_dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o644)
	if executable {
		mode = 0o755
	}
	for _, f := range []string{"apply.sh", "check.sh"} {
		if err := os.WriteFile(filepath.Join(dir, "skyhook_dir", f), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const packageConfig = `{"schema_version":"v1","package_name":"demo","package_version":"1.0.0","modes":{
  "apply":[{"name":"apply","path":"apply.sh","returncodes":[0]}],
  "apply-check":[{"name":"check","path":"check.sh","returncodes":[0]}]}}`

func TestValidateCommand(t *testing.T) {
	run := func(args ...string) (string, error) {
		cmd := newValidateCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(args)
		err := cmd.Execute()
		return out.String(), err
	}
	good := writePackage(t, packageConfig, true)
	if out, err := run(good); err != nil || !strings.Contains(out, "valid") {
		t.Fatalf("a valid package: %v\n%s", err, out)
	}
	broken := writePackage(t, strings.Replace(packageConfig, `"apply-check"`, `"config"`, 1), false)
	out, err := run(good, broken)
	if err == nil {
		t.Fatalf("a broken package passed:\n%s", out)
	}
	for _, want := range []string{
		broken + ": modes.apply-check: is required: mode apply has steps",
		broken + ": modes.config-check: is required: mode config has steps",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Step files without execute bits are valid: the agent adds them before
	// it runs a step, as NodeWright's agent does.
	notExec := writePackage(t, packageConfig, false)
	if out, err := run(notExec); err != nil {
		t.Errorf("a package whose steps lack the execute bits is refused: %v\n%s", err, out)
	}

	// The reference packages are config.json alone: valid as configs, and
	// their missing step files are reported unless --config-only.
	shared, err := testenv.ReferenceDir()
	if err != nil {
		t.Fatal(err)
	}
	tuning := filepath.Join(shared, "testdata", "packages", "tuning", "config.json")
	if out, err := run(tuning); err == nil || !strings.Contains(out, "no such file") {
		t.Errorf("missing step files not reported: %v\n%s", err, out)
	}
	for _, name := range []string{"shellscript", "tuned", "tuning"} {
		if out, err := run("--config-only", filepath.Join(shared, "testdata", "packages", name)); err != nil || !strings.Contains(out, ": valid") {
			t.Errorf("reference package %s with --config-only: %v\n%s", name, err, out)
		}
	}
	if out, err := run("--config-only", broken); err == nil || !strings.Contains(out, "modes.config-check: is required") {
		t.Errorf("--config-only let a broken config pass: %v\n%s", err, out)
	}
}
