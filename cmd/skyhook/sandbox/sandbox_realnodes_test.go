package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodenet"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/test/promtest"
)

// up --real-nodes 2: two real nodes on a network, the operator installed
// on them with its chart, two Ready pods; the simulated demo and the real
// demo on both real nodes complete, each node's steps writing under its
// own directory; the Prometheus up prints scrapes both operator pods;
// status names Prometheus and every process; down leaves no process of
// the state directory and no bridge of the sandbox's.
func TestSandboxRealNodesInstallsTheOperator(t *testing.T) {
	if err := kubeletnode.Supported(); err != nil {
		t.Skipf("no real node on this machine: %v", err)
	}
	skyhook := buildCLI(t)
	stateDir := shortTempDir(t)
	run := sandboxRunner(t, skyhook, stateDir)
	bridgesBefore, err := nodenet.Bridges()
	if err != nil {
		t.Fatal(err)
	}

	started := time.Now()
	out := run("sandbox", "up", "--nodes", "1", "--real-nodes", "2")
	t.Logf("up --real-nodes 2 with both demos: %s", time.Since(started).Round(time.Second))
	for _, want := range []string{
		"1/1 done, 0 in progress, 0 waiting — complete",
		`Rolling out the Skyhook "real-demo" on the real nodes`, "2/2 done, 0 in progress, 0 waiting — complete",
		"The operator runs on them, installed with its chart (release skyhook-operator)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("up --real-nodes does not say %q:\n%s", want, out)
		}
	}
	for _, node := range []string{"real-1", "real-2"} {
		hello := filepath.Join(stateDir, "real-node-host", "out", node, "hello.txt")
		want := "hello from hello-host 1.0.0 (Skyhook real-demo), applied on node " + node + "\n"
		if got, err := os.ReadFile(hello); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", hello, got, err, want)
		}
	}

	bin, err := binaries.Ensure(context.Background(), binaries.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin.Kubectl, "--kubeconfig", filepath.Join(stateDir, "kubeconfig"), "-n", "skyhook-system", "get", "pods",
		"-l", "control-plane=controller-manager", "-o", `jsonpath={range .items[*]}{.spec.nodeName} {.status.phase}{"\n"}{end}`)
	pods, err := cmd.CombinedOutput()
	if err != nil || strings.Count(string(pods), " Running") != 2 || !strings.Contains(string(pods), "real-1") || !strings.Contains(string(pods), "real-2") {
		t.Errorf("the operator's pods: %q (%v), want one running on each real node", pods, err)
	}

	status := run("sandbox", "status")
	promURL := regexp.MustCompile(`prometheus\s+(http://\S+)`).FindStringSubmatch(status)
	if promURL == nil {
		t.Fatalf("status names no Prometheus:\n%s", status)
	}
	if up := scrapedUp(t, promURL[1]); up != 2 {
		t.Errorf("Prometheus at %s has %d operator targets up, want 2", promURL[1], up)
	}
	pids := pidsIn(status)
	for _, want := range []string{"kube-proxy-real-1", "kubelet-real-2", "containerd-real-2"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
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
	bridgesAfter, err := nodenet.Bridges()
	if err != nil || len(bridgesAfter) != len(bridgesBefore) {
		t.Errorf("bridges before up %v, after down %v (%v)", bridgesBefore, bridgesAfter, err)
	}
}

// scrapedUp asks Prometheus, for up to a minute (it scrapes every 15 s),
// how many of the operator's metrics targets are up.
func scrapedUp(t *testing.T, base string) int {
	t.Helper()
	prom, err := promtest.NewClient(base)
	if err != nil {
		t.Fatal(err)
	}
	query := `sum(up{job="skyhook-operator-controller-manager-metrics-service"})`
	up := 0
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && up < 2; time.Sleep(2 * time.Second) {
		v, _, err := prom.Query(context.Background(), query, time.Now())
		if vector, ok := v.(model.Vector); err == nil && ok && len(vector) == 1 {
			up = int(vector[0].Value)
		}
	}
	return up
}

// up refuses --real-nodes out of range, and with --real-node, naming the
// flag, before it writes anything.
func TestSandboxRealNodesRefused(t *testing.T) {
	skyhook := buildCLI(t)
	stateDir := t.TempDir()
	for args, want := range map[string]string{
		"--real-nodes 5":             "--real-nodes: must be 0 to 4 (the nodes of one network), got 5",
		"--real-nodes -1":            "--real-nodes: must be 0 to 4",
		"--real-nodes 2 --real-node": "--real-node and --real-nodes: choose one",
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
