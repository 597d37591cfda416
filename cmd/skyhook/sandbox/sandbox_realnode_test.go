package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
)

// up --real-node on a machine that can run a real node: the simulated demo
// completes as without it, the real demo's package runs on the real node,
// whose steps write files on this machine that up shows with their
// content, status lists the real node's containerd and kubelet, and down
// leaves no process of the state directory behind.
func TestSandboxRealNode(t *testing.T) {
	if err := kubeletnode.Supported(); err != nil {
		t.Skipf("no real node on this machine: %v", err)
	}
	skyhook := buildCLI(t)
	stateDir := shortTempDir(t)
	run := sandboxRunner(t, skyhook, stateDir)

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
	for _, want := range []string{"containerd-real-node", "kubelet-real-node", "kube-apiserver", "3/3 Ready", "nodes' registry          127.0.0.1:"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	pids := pidsIn(status)
	if len(pids) != 8 { // the supervisor, five control-plane components (the scheduler too), containerd and the kubelet
		t.Errorf("status names %d processes, want 8:\n%s", len(pids), status)
	}

	run("sandbox", "down")
	for _, pid := range pids {
		if proc.Alive(pid) {
			t.Errorf("pid %d still runs after down", pid)
		}
	}
	if left := proc.Naming(stateDir); len(left) > 0 {
		t.Errorf("processes of the state directory still run after down:\n%s", strings.Join(left, "\n"))
	}
	if _, err := os.Stat("/var/lib/skyhook/real-demo"); !os.IsNotExist(err) {
		t.Errorf("the real demo's package copies are still on the host after down: %v", err)
	}
}

// down after the supervisor was killed (no Cluster.Stop): containerd and
// the kubelet die with it or by their pid files, and down kills the shims
// and the containers of a pod still running on the real node, and detaches
// the node's mounts.
func TestSandboxRealNodeDownAfterSupervisorKilled(t *testing.T) {
	if err := kubeletnode.Supported(); err != nil {
		t.Skipf("no real node on this machine: %v", err)
	}
	skyhook := buildCLI(t)
	stateDir := shortTempDir(t)
	run := sandboxRunner(t, skyhook, stateDir)
	run("sandbox", "up", "--nodes", "0", "--real-node", "--demo=false")

	// A pod that runs until stopped: the pause image from the registry.
	registry, err := os.ReadFile(filepath.Join(stateDir, "registry"))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := binaries.Ensure(context.Background(), binaries.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kubectl := func(stdin string, args ...string) {
		t.Helper()
		cmd := exec.Command(bin.Kubectl, args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(stateDir, "kubeconfig"))
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	kubectl(fmt.Sprintf(`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sleeper", "namespace": "default"},
"spec": {"nodeName": "real-node", "containers": [{"name": "sleeper", "image": "%s/skyhook/pause:sandbox"}]}}`, strings.TrimSpace(string(registry))),
		"apply", "-f", "-")
	kubectl("", "wait", "--for=condition=Ready", "pod/sleeper", "--timeout=60s")
	shims := proc.Naming(stateDir)
	var pod []int // the shims and their containers
	for _, p := range shims {
		if strings.Contains(p, "containerd-shim") {
			pid, _ := strconv.Atoi(p[:strings.Index(p, ":")])
			pod = append(pod, pid)
			pod = append(pod, proc.Descendants(pid)...)
		}
	}
	if len(pod) < 3 { // a shim, the pod's sandbox and its container
		t.Fatalf("the running pod has processes %v, want a shim and its containers; processes naming the state directory:\n%s", pod, strings.Join(shims, "\n"))
	}

	supervisor, err := os.ReadFile(filepath.Join(stateDir, "supervisor.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.Fields(string(supervisor))[0])
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for proc.Alive(pid) {
		time.Sleep(50 * time.Millisecond)
	}
	out := run("sandbox", "down")
	if !strings.Contains(out, "cleaned up leftover containerd-shim of real-node") {
		t.Errorf("down does not say it killed the pod's shim:\n%s", out)
	}
	time.Sleep(time.Second) // SIGKILL is delivered, not awaited
	for _, p := range pod {
		if proc.Alive(p) {
			t.Errorf("pid %d of the pod still runs after down", p)
		}
	}
	if left := proc.Naming(stateDir); len(left) > 0 {
		t.Errorf("processes of the state directory still run after down:\n%s", strings.Join(left, "\n"))
	}
	if mounts, _ := os.ReadFile("/proc/self/mounts"); strings.Contains(string(mounts), stateDir) {
		t.Errorf("mounts under the state directory after down:\n%s", mounts)
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

	// A state directory too long for containerd's socket, on a machine
	// that could run the node.
	if kubeletnode.Supported() != nil {
		return
	}
	long := filepath.Join(stateDir, strings.Repeat("x", 100))
	out, err = exec.Command(skyhook, "sandbox", "up", "--real-node", "--state-dir", long).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "too long for containerd's socket path") {
		t.Errorf("up --real-node with a long state directory: %v\n%s", err, out)
	}
	if _, err := os.Stat(long); !os.IsNotExist(err) {
		t.Errorf("up --real-node created the too long state directory: %v", err)
	}
}

// shortTempDir is a temporary directory short enough for containerd's
// socket below it (t.TempDir's names the test).
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sbx-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func indent(content string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(content, "\n"), "\n") {
		b.WriteString("      " + l + "\n")
	}
	return b.String()
}
