package sandbox_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// The sandbox as a person uses it, through the skyhook binary built here:
// up prints how to use it and is idempotent, kubectl works with the printed
// kubeconfig, status tells what runs, down leaves no process behind.
func TestSandboxUpStatusDown(t *testing.T) {
	skyhook := buildCLI(t)
	stateDir := t.TempDir()
	run := sandboxRunner(t, skyhook, stateDir)

	// In NodeWright v0.18+'s namespace rather than the default one.
	out := run("sandbox", "up", "--nodes", "3", "--operator-namespace", "nodewright")
	kubeconfig := filepath.Join(stateDir, "kubeconfig")
	if !strings.Contains(out, "export KUBECONFIG="+kubeconfig) || !strings.Contains(out, "get pods -n nodewright\n") {
		t.Fatalf("up does not say how to use the sandbox:\n%s", out)
	}
	// The demo rolled out one node at a time (30% of 3) and showed it.
	for _, want := range []string{`Rolling out the demo Skyhook "demo"`, "1/3 done, 1 in progress, 1 waiting", "3/3 done, 0 in progress, 0 waiting — complete"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo progress lacks %q:\n%s", want, out)
		}
	}
	if again := run("sandbox", "up", "--nodes", "3"); !strings.Contains(again, "already runs") || !strings.Contains(again, "export KUBECONFIG="+kubeconfig) {
		t.Fatalf("a second up should only repeat the usage:\n%s", again)
	}

	status := run("sandbox", "status")
	for _, want := range []string{"supervisor", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "3/3 Ready", "operator metrics         http://127.0.0.1:"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	// The operator's metrics, NodeWright's names among them, on loopback.
	url := strings.TrimSpace(status[strings.Index(status, "http://127.0.0.1:"):])
	resp, err := http.Get(strings.Fields(url)[0])
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `skyhook_status{skyhook_name="demo",status="complete"} 1`) {
		t.Errorf("the metrics endpoint lacks the demo's skyhook_status:\n%.2000s", body)
	}

	bin, err := binaries.Ensure(context.Background(), binaries.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kubectl := exec.Command(bin.Kubectl, "get", "skyhooks,nodes", "--no-headers")
	kubectl.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	got, err := kubectl.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get skyhooks,nodes with the sandbox kubeconfig: %v\n%s", err, got)
	}
	if n := strings.Count(string(got), " Ready "); n != 3 {
		t.Fatalf("kubectl shows %d Ready nodes, want 3:\n%s", n, got)
	}
	namespaces := exec.Command(bin.Kubectl, "get", "namespaces", "-o", "name")
	namespaces.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if got, err := namespaces.CombinedOutput(); err != nil || !strings.Contains(string(got), "namespace/nodewright\n") || strings.Contains(string(got), "skyhook-system") {
		t.Errorf("--operator-namespace nodewright: namespaces %v\n%s", err, got)
	}

	// kubectl apply gets the webhooks' feedback at once, and the reference
	// system's quick-start Skyhook applies (over the sandbox's own demo).
	apply := func(manifest string, extra ...string) (string, error) {
		cmd := exec.Command(bin.Kubectl, append([]string{"apply", "-f", "-"}, extra...)...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		cmd.Stdin = strings.NewReader(manifest)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	bad := "apiVersion: skyhook.nvidia.com/v1alpha1\nkind: Skyhook\nmetadata: {name: bad}\nspec:\n  packages:\n    tuning: {version: latest, image: ubuntu}\n"
	for _, dryRun := range [][]string{{"--dry-run=server"}, nil} {
		out, err := apply(bad, dryRun...)
		if err == nil || !strings.Contains(out, "spec.packages.tuning.version") || !strings.Contains(out, "policy require-registry-host") {
			t.Errorf("kubectl apply %v of an invalid Skyhook: %v\n%s", dryRun, err, out)
		}
	}
	if out, err := apply(string(testenv.SeedExamples(t)["demo.yaml"])); err != nil || !strings.Contains(out, "skyhook.skyhook.nvidia.com/demo") {
		t.Errorf("kubectl apply of the demo Skyhook: %v\n%s", err, out)
	}

	wait := exec.Command(bin.Kubectl, "wait", "--for=condition=Ready", "skyhooks/demo", "--timeout=60s")
	wait.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if out, err := wait.CombinedOutput(); err != nil || !strings.Contains(string(out), "condition met") {
		t.Errorf("kubectl wait --for=condition=Ready skyhooks/demo: %v\n%s", err, out)
	}

	// The supervisor, etcd, the apiserver, the controller-manager, the
	// scheduler and KWOK.
	pids := pidsIn(status)
	if len(pids) != 6 {
		t.Fatalf("status names %d processes, want 6:\n%s", len(pids), status)
	}
	run("sandbox", "down")
	for _, pid := range pids {
		if proc.Alive(pid) {
			t.Errorf("pid %d still runs after down", pid)
		}
	}
	if after := run("sandbox", "status"); !strings.Contains(after, "not running") {
		t.Errorf("status after down:\n%s", after)
	}
}

func pidsIn(status string) []int {
	var pids []int
	for _, m := range regexp.MustCompile(`pid (\d+)`).FindAllStringSubmatch(status, -1) {
		pid, _ := strconv.Atoi(m[1])
		pids = append(pids, pid)
	}
	return pids
}

// buildCLI builds cmd/skyhook into the test's temporary directory.
func buildCLI(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "skyhook")
	if err := testenv.BuildCLI(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// sandboxRunner runs `skyhook ARGS --state-dir stateDir` and returns its
// output, failing the test if it fails; the sandbox is taken down when the
// test ends.
func sandboxRunner(t *testing.T, skyhook, stateDir string) func(args ...string) string {
	t.Cleanup(func() { _ = exec.Command(skyhook, "sandbox", "down", "--state-dir", stateDir).Run() })
	return func(args ...string) string {
		t.Helper()
		out, err := exec.Command(skyhook, append(args, "--state-dir", stateDir)...).CombinedOutput()
		if err != nil {
			t.Fatalf("skyhook %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}
