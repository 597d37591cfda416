package nodeimages

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The agent image is for this machine's platform and runs the agent of
// this source tree, stamped with AgentVersion.
func TestAgentImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agent with go build")
	}
	var log strings.Builder
	img, err := AgentImage(t.Context(), &log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "cmd/skyhook-agent") {
		t.Errorf("log %q does not show the agent's go build", log.String())
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if p := Platform(); cfg.OS != p.OS || cfg.Architecture != p.Architecture {
		t.Errorf("platform %s/%s, want %s", cfg.OS, cfg.Architecture, p)
	}
	if len(cfg.Config.Entrypoint) != 1 {
		t.Fatalf("entrypoint %v, want the agent binary", cfg.Config.Entrypoint)
	}
	agent := filepath.Join(extract(t, img), cfg.Config.Entrypoint[0])
	out, err := exec.Command(agent, "--version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "skyhook-agent "+AgentVersion {
		t.Errorf("%s --version: %q, %v; want skyhook-agent %s", cfg.Config.Entrypoint[0], out, err, AgentVersion)
	}
}
