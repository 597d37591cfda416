package sandbox_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// `up --vm-nodes` refuses, naming the flag, counts outside one network's
// and a mix with the real-node modes, before it writes anything.
func TestSandboxVMNodesRefused(t *testing.T) {
	skyhook := buildCLI(t)
	stateDir := t.TempDir()
	for args, want := range map[string]string{
		"--vm-nodes 5":                "--vm-nodes: must be 0 to 4 (the nodes of one network), got 5",
		"--vm-nodes -2":               "--vm-nodes: must be 0 to 4",
		"--vm-nodes 1 --real-node":    "--vm-nodes with --real-node or --real-nodes: choose one",
		"--vm-nodes 1 --real-nodes 1": "--vm-nodes with --real-node or --real-nodes: choose one",
	} {
		out, err := exec.Command(skyhook, append(append([]string{"sandbox", "up"}, strings.Fields(args)...), "--state-dir", stateDir)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("up %s: %v, output lacks %q:\n%s", args, err, want, out)
		}
	}
	if entries, _ := os.ReadDir(stateDir); len(entries) > 0 {
		t.Errorf("up wrote into the state directory before refusing: %v", entries)
	}
}
