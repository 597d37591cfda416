package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The built binary: static (no dynamic loader needed in an image of its
// own), the version stamped at build time, validate's exit codes, and an
// unknown mode refused.
func TestAgentBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "skyhook-agent")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w -X main.Version=1.2.3-test", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	if out, _ := exec.Command("file", bin).CombinedOutput(); len(out) > 0 && !strings.Contains(string(out), "statically linked") {
		t.Errorf("not static: %s", out)
	}
	for _, arg := range []string{"--version", "version"} {
		out, err := exec.Command(bin, arg).CombinedOutput()
		if err != nil || string(out) != "skyhook-agent 1.2.3-test\n" {
			t.Errorf("%s: %q, %v; want the stamped version", arg, out, err)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"schema_version":"v1","package_name":"demo","package_version":"1.0.0","modes":{"apply":[{"name":"a","path":"a.sh"}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "validate", dir).CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "modes.apply-check: is required") {
		t.Errorf("validate a broken package: exit %d\n%s", code, out)
	}
	cmd := exec.Command(bin, "install", "/root", "/root/x")
	cmd.Env = []string{"SKYHOOK_NAME=demo", "SKYHOOK_PACKAGE=demo", "SKYHOOK_VERSION=1.0.0", "SKYHOOK_GENERATION=1"}
	out, err = cmd.CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), `unknown mode "install"`) {
		t.Errorf("unknown mode: exit %d\n%s", code, out)
	}
	if code := exitCode(exec.Command(bin).Run()); code != 2 {
		t.Errorf("no arguments: exit %d, want 2", code)
	}
}

func exitCode(err error) int {
	if e, ok := err.(*exec.ExitError); ok {
		return e.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// SKYHOOK_LOG_KEEP, and NodeWright's SKYHOOK_AGENT_WRITE_LOGS=false which
// turns log files off; anything else is a clear error.
func TestLogsToKeep(t *testing.T) {
	cases := []struct {
		keep, write string
		want        int
		err         string
	}{
		{"", "", 5, ""},
		{"3", "", 3, ""},
		{"3", "false", 0, ""},
		{"", "TRUE", 5, ""},
		{"", "no", 0, `SKYHOOK_AGENT_WRITE_LOGS="no": want true or false`},
		{"-1", "", 0, `SKYHOOK_LOG_KEEP="-1"`},
	}
	for _, tc := range cases {
		t.Setenv("SKYHOOK_LOG_KEEP", tc.keep)
		t.Setenv("SKYHOOK_AGENT_WRITE_LOGS", tc.write)
		got, err := logsToKeep(os.Getenv)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q/%q: %v, want an error with %q", tc.keep, tc.write, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q/%q: %d, %v; want %d", tc.keep, tc.write, got, err, tc.want)
		}
	}
}

// NodeWright's COPY_RESOLV (off unless true: NodeWright's operator sets
// it false in every stage pod) and OVERLAY_ALWAYS_RUN_STEP: anything but
// true or false is a clear error. SKYHOOK_AGENT_BUFFER_LIMIT, which
// NodeWright's agent v7.0.0 no longer reads, is ignored with a warning
// when it is no size.
func TestNodeWrightOptions(t *testing.T) {
	cases := []struct {
		resolv, always, limit string
		want                  nodeWright
		err                   string
	}{
		{"", "", "", nodeWright{outputLimit: 8192}, ""},
		{"true", "", "", nodeWright{resolvConf: "/etc/resolv.conf", outputLimit: 8192}, ""},
		{"FALSE", "True", "1024", nodeWright{alwaysRun: true, outputLimit: 1024}, ""},
		{"yes", "", "", nodeWright{}, `COPY_RESOLV="yes": want true or false`},
		{"", "1", "", nodeWright{}, `OVERLAY_ALWAYS_RUN_STEP="1": want true or false`},
		{"", "", "8k", nodeWright{outputLimit: 8192, warning: `SKYHOOK_AGENT_BUFFER_LIMIT="8k" ignored: want a number of bytes, at least 16; output is written in pieces of 8192 bytes`}, ""},
		{"", "", "4", nodeWright{outputLimit: 8192, warning: `SKYHOOK_AGENT_BUFFER_LIMIT="4" ignored: want a number of bytes, at least 16; output is written in pieces of 8192 bytes`}, ""},
	}
	for _, tc := range cases {
		t.Setenv("COPY_RESOLV", tc.resolv)
		t.Setenv("OVERLAY_ALWAYS_RUN_STEP", tc.always)
		t.Setenv("SKYHOOK_AGENT_BUFFER_LIMIT", tc.limit)
		got, err := nodeWrightOptions(os.Getenv)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q/%q/%q: %v, want an error with %q", tc.resolv, tc.always, tc.limit, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q/%q/%q: %+v, %v; want %+v", tc.resolv, tc.always, tc.limit, got, err, tc.want)
		}
	}
}

// SKYHOOK_SYSTEMCTL: unset is systemctl; an absolute path or a bare name
// is passed on; a relative path with a slash is refused at startup (exit
// 2), naming the variable and the rule. An absolute path that is not on
// the host fails the interrupt (exit 1), naming the variable and the path.
func TestSystemctlProgram(t *testing.T) {
	for _, v := range []string{"", "systemctl", "rc-service", "/usr/local/bin/fake-systemctl"} {
		t.Setenv("SKYHOOK_SYSTEMCTL", v)
		want := v
		if v == "" {
			want = "systemctl"
		}
		if got, err := systemctlProgram(os.Getenv); err != nil || got != want {
			t.Errorf("SKYHOOK_SYSTEMCTL=%q: %q, %v; want %q", v, got, err, want)
		}
	}

	for _, name := range []string{"SKYHOOK_NAME", "SKYHOOK_PACKAGE", "SKYHOOK_VERSION", "SKYHOOK_GENERATION"} {
		t.Setenv(name, "demo-1")
	}
	root := t.TempDir()
	args := []string{"interrupt", root, filepath.Join(root, "copy"), `{"type":"reboot"}`}
	for _, tc := range []struct {
		value string
		code  int
		err   string
	}{
		{"bin/fake-systemctl", 2, `SKYHOOK_SYSTEMCTL="bin/fake-systemctl": want an absolute path on the host or a bare name`},
		{"./fake-systemctl", 2, "not a relative path"},
		{"/opt/missing/systemctl", 1, "SKYHOOK_SYSTEMCTL=/opt/missing/systemctl: /opt/missing/systemctl is not on the host"},
	} {
		t.Setenv("SKYHOOK_SYSTEMCTL", tc.value)
		code, stderr := withStderr(t, func() int { return agent(args) })
		if code != tc.code || !strings.Contains(stderr, tc.err) {
			t.Errorf("SKYHOOK_SYSTEMCTL=%q: exit %d, %q; want exit %d and %q", tc.value, code, stderr, tc.code, tc.err)
		}
	}
}

// withStderr runs f with os.Stderr going to a file, and returns what f
// returned and what it wrote there.
func withStderr(t *testing.T, f func() int) (int, string) {
	t.Helper()
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	saved := os.Stderr
	os.Stderr = file
	defer func() { os.Stderr = saved }()
	code := f()
	data, err := os.ReadFile(file.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, string(data)
}

// The names the agent's records on the host are made of are one path
// element each, and its directories there clean absolute paths: anything
// else is refused at startup (exit 2), naming the variable.
func TestRecordPathsStayOnTheHost(t *testing.T) {
	good := map[string]string{"SKYHOOK_NAME": "demo", "SKYHOOK_PACKAGE": "tuning", "SKYHOOK_VERSION": "1.0.0", "SKYHOOK_GENERATION": "3"}
	for _, tc := range []struct{ name, value, err string }{
		{"SKYHOOK_PACKAGE", "../../etc", `SKYHOOK_PACKAGE="../../etc": want one path element`},
		{"SKYHOOK_VERSION", "..", `SKYHOOK_VERSION="..": want one path element`},
		{"SKYHOOK_NAME", "a/b", `SKYHOOK_NAME="a/b": want one path element`},
		{"SKYHOOK_GENERATION", "", "SKYHOOK_GENERATION is not set"},
		{"SKYHOOK_ROOT_DIR", "/var/lib/../../etc", `SKYHOOK_ROOT_DIR="/var/lib/../../etc": want a clean absolute path`},
		{"SKYHOOK_LOG_DIR", "var/log", `SKYHOOK_LOG_DIR="var/log": want a clean absolute path`},
		{"SKYHOOK_ROOT_DIR", "/var/lib/nodewright", ""},
	} {
		env := map[string]string{tc.name: tc.value}
		for k, v := range good {
			if _, set := env[k]; !set {
				env[k] = v
			}
		}
		_, err := options([]string{"apply", "/host", "/host/copy"}, func(k string) string { return env[k] })
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s=%q: %v", tc.name, tc.value, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s=%q: %v; want an error with %q", tc.name, tc.value, err, tc.err)
		}
	}
}
