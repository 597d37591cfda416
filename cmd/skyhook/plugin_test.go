package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Built as kubectl-skyhook and found on the PATH, the CLI is `kubectl
// skyhook`: kubectl runs it with the rest of the command line, and its help
// names it so.
func TestKubectlPlugin(t *testing.T) {
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl-skyhook"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	seed(t)
	kubectl := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(env.Binaries.Kubectl, args...)
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+env.Kubeconfig)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := kubectl("plugin", "list"); !strings.Contains(out, filepath.Join(bin, "kubectl-skyhook")) {
		t.Errorf("kubectl plugin list does not find it:\n%s", out)
	}
	if out := kubectl("skyhook", "get", "skyhooks"); !strings.Contains(out, "gpu") || !strings.Contains(out, "Applied to 3/3 nodes") {
		t.Errorf("kubectl skyhook get skyhooks:\n%s", out)
	}
	if out := kubectl("skyhook", "package", "--help"); !strings.Contains(out, "kubectl skyhook package [command]") {
		t.Errorf("the help does not name kubectl skyhook:\n%s", out)
	}
}
