package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster/binaries"
)

// up --real-node on a machine that can run a real node: the simulated demo
// completes as without it, the real demo's package runs on the real node,
// whose steps write files on this machine that up shows with their
// content, status lists the real node's containerd and kubelet, and down
// leaves no process of the state directory behind.
func TestSandboxRealNode(t *testing.T) {
	if err := cluster.RealNodeSupported(); err != nil {
		t.Skipf("no real node on this machine: %v", err)
	}
	skyhook := buildCLI(t)
	stateDir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(skyhook, append(args, "--state-dir", stateDir)...).CombinedOutput()
		if err != nil {
			t.Fatalf("skyhook %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command(skyhook, "sandbox", "down", "--state-dir", stateDir).Run() })

	out := run("sandbox", "up", "--nodes", "2", "--real-node")
	for _, want := range []string{
		`Rolling out the demo Skyhook "demo"`, "2/2 done, 0 in progress, 0 waiting — complete",
		`Rolling out the Skyhook "real-demo" on the real node`, "1/1 done, 0 in progress, 0 waiting — complete",
		"The kubelet " + binaries.KubeletVersion + " of node real-node ran hello-host 1.0.0",
		"Real node real-node (label type=real)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("up --real-node does not say %q:\n%s", want, out)
		}
	}
	// Each file the steps wrote, named with its content, and there.
	hostOut := filepath.Join(stateDir, "real-node-host", "out")
	for file, content := range map[string]string{
		"hello.txt":  "hello from hello-host 1.0.0 (Skyhook real-demo), applied on node real-node\n",
		"motd.txt":   "Welcome to real-node: this line came from the real-demo Skyhook's configMap.\n",
		"checks.log": "apply-check: hello.txt says hello\nconfig-check: motd.txt matches the configMap\n",
	} {
		path := filepath.Join(hostOut, file)
		shown := "  " + path + "\n" + indent(content)
		if !strings.Contains(out, shown) {
			t.Errorf("up does not show %s as\n%s", file, shown)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != content {
			t.Errorf("%s on the host: %q, %v; want %q", path, got, err, content)
		}
	}

	status := run("sandbox", "status")
	for _, want := range []string{"containerd-real-node", "kubelet-real-node", "kube-apiserver", "3/3 Ready", "real node registry       127.0.0.1:"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	pids := pidsIn(status)
	if len(pids) != 7 { // the supervisor, four control-plane components, containerd and the kubelet
		t.Errorf("status names %d processes, want 7:\n%s", len(pids), status)
	}

	run("sandbox", "down")
	for _, pid := range pids {
		if cluster.ProcessAlive(pid) {
			t.Errorf("pid %d still runs after down", pid)
		}
	}
	if left := processesNaming(stateDir); len(left) > 0 {
		t.Errorf("processes of the state directory still run after down:\n%s", strings.Join(left, "\n"))
	}
	if _, err := os.Stat("/var/lib/skyhook/real-demo"); !os.IsNotExist(err) {
		t.Errorf("the real demo's package copies are still on the host after down: %v", err)
	}
}

// up --real-node where a real node cannot run (here: containerd not on
// PATH) fails with the reason before it starts or builds anything.
func TestSandboxRealNodeRefused(t *testing.T) {
	skyhook := buildCLI(t)
	stateDir := t.TempDir()
	cmd := exec.Command(skyhook, "sandbox", "up", "--real-node", "--state-dir", stateDir)
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("up --real-node without containerd succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "--real-node: a real node cannot run here:") {
		t.Errorf("up --real-node does not say why it cannot run:\n%s", out)
	}
	if entries, _ := os.ReadDir(stateDir); len(entries) > 0 {
		t.Errorf("up --real-node wrote into the state directory before failing: %v", entries)
	}
}

func indent(content string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(content, "\n"), "\n") {
		b.WriteString("      " + l + "\n")
	}
	return b.String()
}

// processesNaming lists the running processes whose command line names
// dir (containerd, the kubelet and the shims name files in it).
func processesNaming(dir string) []string {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, f := range cmdlines {
		data, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(data), dir) {
			continue
		}
		found = append(found, filepath.Base(filepath.Dir(f))+": "+strings.ReplaceAll(string(data), "\x00", " "))
	}
	return found
}
