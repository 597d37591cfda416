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
// names it so. Linked as kubectl-nodewright (as make build links it), it
// is `kubectl nodewright` too, for NodeWright's users' scripts, and its
// --version is NodeWright's plugin's.
func TestKubectlPlugin(t *testing.T) {
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl-skyhook"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	if err := os.Symlink("kubectl-skyhook", filepath.Join(bin, "kubectl-nodewright")); err != nil {
		t.Fatal(err)
	}
	seed(t)
	createNodeWright(t, "plugin-nw", nil, map[string]string{"tuning": "1.0.0"})
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
	if out := kubectl("plugin", "list"); !strings.Contains(out, filepath.Join(bin, "kubectl-nodewright")) {
		t.Errorf("kubectl plugin list does not find kubectl-nodewright:\n%s", out)
	}
	if out := kubectl("nodewright", "node", "list", "--nodewright", "plugin-nw"); out != "No nodes found for NodeWright \"plugin-nw\"\n" {
		t.Errorf("kubectl nodewright node list --nodewright:\n%s", out)
	}
	if out := kubectl("nodewright", "pause", "plugin-nw", "--confirm"); out != "NodeWright \"plugin-nw\" paused\n" {
		t.Errorf("kubectl nodewright pause:\n%s", out)
	}
	if out := kubectl("nodewright", "node", "--help"); !strings.Contains(out, "kubectl nodewright node [command]") {
		t.Errorf("the help does not name kubectl nodewright:\n%s", out)
	}
	for plugin, want := range map[string]string{"skyhook": "Skyhook plugin: ", "nodewright": "NodeWright plugin: "} {
		if out := kubectl(plugin, "--version"); !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 {
			t.Errorf("kubectl %s --version: %q, want %q and the version", plugin, out, want)
		}
	}
}
