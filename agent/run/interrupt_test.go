package run

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// systemctlStandIn is run in place of systemctl: it records its arguments and, when
// asked to reboot, which interrupt records exist by then.
const systemctlStandIn = `#!/bin/sh
echo "$@" >> /var/log/stand-in.calls
if [ "$1" = reboot ]; then
  echo records: $(ls /var/lib/skyhook/demo/interrupts/tuning) >> /var/log/stand-in.calls
fi
`

// SKYHOOK_SYSTEMCTL (Options.Systemctl) names the program the interrupts
// run in place of systemctl, on a host without it: an absolute path on the
// host (its symlinks followed inside the host root) or a bare name in the
// usual directories. It gets systemctl's arguments, once per generation; a
// reboot's record is written before it runs. A program that is not on the
// host fails the interrupt, naming the variable and the path, and leaves
// no record, so the pod's next try runs it.
func TestSystemctlCanBeAnotherProgram(t *testing.T) {
	root := newRoot(t)
	if err := os.Remove(filepath.Join(root, "usr", "bin", "systemctl")); err != nil { // a host without systemd
		t.Fatal(err)
	}
	for path, body := range map[string]string{"opt/fake/stand-in": systemctlStandIn, "sbin/stand-in": systemctlStandIn} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// An absolute symlink on the host: followed inside the host root, not
	// in the agent's own filesystem.
	if err := os.MkdirAll(filepath.Join(root, "usr", "local", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/opt/fake/stand-in", filepath.Join(root, "usr", "local", "bin", "stand-in")); err != nil {
		t.Fatal(err)
	}
	p := newPackage(t, root, "1.0.0", config, scripts, nil)
	var out bytes.Buffer
	calls := func() string { return read(t, root, "var/log/stand-in.calls") }
	interrupt := func(program, generation, spec string) error {
		o := options(p, "interrupt", "1.0.0", generation, &out)
		o.Systemctl, o.Interrupt = program, spec
		_, err := Run(context.Background(), o)
		return err
	}

	for range 2 { // the second run does nothing: it ran for this generation
		if err := interrupt("/opt/fake/stand-in", "1", `{"type":"service","services":["containerd","kubelet"]}`); err != nil {
			t.Fatalf("service interrupt: %v\n%s", err, out.String())
		}
	}
	if got := calls(); got != "daemon-reload\nrestart containerd\nrestart kubelet\n" {
		t.Errorf("service interrupt calls:\n%s", got)
	}
	for range 2 { // the pod after the reboot
		if err := interrupt("/opt/fake/stand-in", "2", `{"type":"reboot"}`); err != nil {
			t.Fatalf("reboot interrupt: %v\n%s", err, out.String())
		}
	}
	if got, want := calls(), "restart kubelet\nreboot\nrecords: 1 2\n"; !strings.HasSuffix(got, want) {
		t.Errorf("reboot calls:\n%s\nwant them to end with\n%s", got, want)
	}
	if err := interrupt("/usr/local/bin/stand-in", "3", `{"type":"service","services":["sshd"]}`); err != nil {
		t.Fatalf("through a symlink: %v\n%s", err, out.String())
	}
	if err := interrupt("stand-in", "4", `{"type":"service","services":["crond"]}`); err != nil {
		t.Fatalf("a bare name: %v\n%s", err, out.String())
	}
	if got, want := calls(), "records: 1 2\ndaemon-reload\nrestart sshd\ndaemon-reload\nrestart crond\n"; !strings.HasSuffix(got, want) {
		t.Errorf("calls:\n%s\nwant them to end with\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(root, "var", "log", "systemctl.calls")); !os.IsNotExist(err) {
		t.Errorf("systemctl ran: %v", err)
	}

	before := calls()
	err := interrupt("/opt/missing/systemctl", "5", `{"type":"reboot"}`)
	if err == nil || !strings.Contains(err.Error(), "SKYHOOK_SYSTEMCTL=/opt/missing/systemctl: /opt/missing/systemctl is not on the host") {
		t.Errorf("a missing program: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "var", "lib", "skyhook", "demo", "interrupts", "tuning", "5")); !os.IsNotExist(err) {
		t.Errorf("the reboot that could not run was recorded: %v", err)
	}
	if err := interrupt("opt/fake/stand-in", "5", `{"type":"reboot"}`); err == nil || !strings.Contains(err.Error(), "neither an absolute path on the host nor a bare name") {
		t.Errorf("a relative path: %v", err)
	}
	if err := interrupt("", "5", `{"type":"service","services":["kubelet"]}`); err == nil ||
		!strings.Contains(err.Error(), "systemctl is not on the host") || !strings.Contains(err.Error(), "SKYHOOK_SYSTEMCTL can name another program") {
		t.Errorf("no systemctl on the host: %v", err)
	}
	if got := calls(); got != before {
		t.Errorf("calls after the failures:\n%s", strings.TrimPrefix(got, before))
	}
}

// A service name systemctl would take for an option never reaches it.
func TestInterruptRefusesServiceNamesLikeOptions(t *testing.T) {
	for _, raw := range []string{`{"type":"service","services":["--now"]}`, `{"type":"service","services":["ok.service","-H host"]}`} {
		if _, err := parseInterrupt(raw); err == nil || !strings.Contains(err.Error(), "want a systemd unit name") {
			t.Errorf("%s: err = %v, want a refusal naming the rule", raw, err)
		}
	}
	if _, err := parseInterrupt(`{"type":"service","services":["nvidia-persistenced.service"]}`); err != nil {
		t.Errorf("a plain unit name was refused: %v", err)
	}
}
