package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// env are the variables options reads, in the order FuzzAgentEnv passes
// their values.
var env = []string{"SKYHOOK_NAME", "SKYHOOK_PACKAGE", "SKYHOOK_VERSION", "SKYHOOK_GENERATION", "SKYHOOK_LOG_KEEP", "SKYHOOK_AGENT_WRITE_LOGS",
	"COPY_RESOLV", "OVERLAY_ALWAYS_RUN_STEP", "SKYHOOK_AGENT_BUFFER_LIMIT", "SKYHOOK_SYSTEMCTL", "SKYHOOK_ROOT_DIR", "SKYHOOK_LOG_DIR"}

// FuzzAgentEnv gives the agent's environment arbitrary values and checks:
// a refusal names the variable; accepted values are sane: logs kept not
// negative, an output limit of at least 16 bytes, systemctl an absolute
// path or a bare name, and every record directory the agent makes on the
// host (state and log directories, Skyhook, package, version and
// generation joined under the host root) stays under the host root.
func FuzzAgentEnv(f *testing.F) {
	f.Add("demo", "tuning", "1.0.0", "3", "5", "true", "false", "false", "8192", "systemctl", "/var/lib/skyhook", "/var/log/skyhook")
	f.Add("demo", "tuning", "1.0.0", "3", "", "", "", "", "", "", "", "")
	f.Add("..", "../../etc", "1.0.0/../../x", "\x00", "-1", "no", "yes", "1", "8k", "bin/x", "../../etc", "var/log")
	f.Add("demo", "tuning", "1.0.0", "3", "99999999999999999999", "FALSE", "TRUE", "True", "15", "/usr/bin/../../x", "/var/lib/../../../etc", "/var/log/")
	f.Fuzz(func(t *testing.T, name, pkg, version, generation, keep, writeLogs, resolv, always, limit, systemctl, stateDir, logDir string) {
		values := map[string]string{}
		for i, v := range []string{name, pkg, version, generation, keep, writeLogs, resolv, always, limit, systemctl, stateDir, logDir} {
			values[env[i]] = v
		}
		o, err := options([]string{"apply", "/host", "/host/copy"}, func(k string) string { return values[k] })
		if err != nil {
			named := false
			for _, k := range env {
				named = named || strings.HasPrefix(err.Error(), k+"=") || strings.HasPrefix(err.Error(), k+" is not set")
			}
			if !named {
				t.Fatalf("a refusal that names no variable: %v", err)
			}
			return
		}
		if o.KeepLogs < 0 || o.OutputLimit < 16 {
			t.Fatalf("keep %d, output limit %d", o.KeepLogs, o.OutputLimit)
		}
		if !filepath.IsAbs(o.Systemctl) && strings.Contains(o.Systemctl, "/") {
			t.Fatalf("systemctl %q", o.Systemctl)
		}
		for _, dir := range []string{o.StateDir, o.LogDir, "/var/lib/skyhook"} {
			for _, p := range [][]string{{dir, o.Skyhook, "flags", o.Package, o.Version}, {dir, o.Skyhook, "interrupts", o.Package, o.Generation}, {dir, o.Skyhook, "history", o.Package + ".json"}} {
				if joined := filepath.Join(append([]string{"/host"}, p...)...); !strings.HasPrefix(joined, "/host/") {
					t.Fatalf("a record path %s is out of the host root", joined)
				}
			}
		}
	})
}
