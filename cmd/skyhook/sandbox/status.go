package sandbox

// Stopping the sandbox, and saying what runs and how to use it.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/chartinstall"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodenet"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/vmnode"
)

// Down stops the supervisor and every process of the sandbox.
func Down(opts Options) error {
	if err := opts.complete(); err != nil {
		return err
	}
	if pid, ok := supervisorPid(opts); ok {
		fmt.Fprintf(opts.Out, "stopping the sandbox supervisor (pid %d)\n", pid)
		_ = syscall.Kill(pid, syscall.SIGTERM)
		// A real node takes longest: its pod sandboxes are removed before
		// containerd stops (see kubeletnode.Node), and a supervisor killed
		// meanwhile would leave their shims running.
		deadline := time.Now().Add(2 * time.Minute)
		for proc.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if proc.Alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if err := cleanUp(opts); err != nil {
		return err
	}
	fmt.Fprintln(opts.Out, "the sandbox is down")
	return nil
}

// cleanUp kills what a dead supervisor left and removes its files.
func cleanUp(opts Options) error {
	killed, err := proc.KillRecorded(opts.path(clusterDir))
	for _, k := range killed {
		fmt.Fprintf(opts.Out, "killed leftover %s\n", k)
	}
	// A real node's pods outlive its containerd; the supervisor's
	// Cluster.Stop removes them, unless it was killed.
	for _, k := range kubeletnode.CleanUp(opts.path(clusterDir)) {
		fmt.Fprintf(opts.Out, "cleaned up leftover %s\n", k)
	}
	for _, d := range vmnode.CleanUp(opts.path(clusterDir)) {
		fmt.Fprintf(opts.Out, "removed the disk %s\n", d)
	}
	for _, b := range nodenet.ReclaimStale() {
		fmt.Fprintf(opts.Out, "deleted leftover network %s\n", b)
	}
	if _, ok := registryHost(opts); ok {
		removeRealDemoCopies()
	}
	_ = os.Remove(opts.path(supervisorPidFile))
	_ = os.Remove(opts.path(readyFile))
	_ = os.Remove(opts.path(metricsFile))
	_ = os.Remove(opts.path(registryFile))
	_ = os.Remove(opts.path(prometheusFile))
	return err
}

// Status describes what runs.
func Status(ctx context.Context, opts Options) error {
	if err := opts.complete(); err != nil {
		return err
	}
	pid, supervisor := supervisorPid(opts)
	procs := proc.RecordedRunning(opts.path(clusterDir))
	if !supervisor && len(procs) == 0 {
		fmt.Fprintf(opts.Out, "The sandbox in %s is not running. Start it with: skyhook sandbox up --state-dir %s\n", opts.StateDir, opts.StateDir)
		return nil
	}
	if supervisor {
		fmt.Fprintf(opts.Out, "supervisor               pid %d\n", pid)
	} else {
		fmt.Fprintln(opts.Out, "supervisor               not running (run `skyhook sandbox down` to clean up)")
	}
	names := make([]string, 0, len(procs))
	for name := range procs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(opts.Out, "%-24s pid %d\n", name, procs[name])
	}
	if !running(opts) {
		fmt.Fprintln(opts.Out, "the cluster is not ready")
		return nil
	}
	ready, total, err := countReadyNodes(ctx, opts.path(kubeconfigFile))
	if err != nil {
		return fmt.Errorf("asking the apiserver: %w", err)
	}
	fmt.Fprintf(opts.Out, "nodes                    %d/%d Ready\n", ready, total)
	fmt.Fprintf(opts.Out, "kubeconfig               %s\n", opts.path(kubeconfigFile))
	if url, err := os.ReadFile(opts.path(metricsFile)); err == nil {
		fmt.Fprintf(opts.Out, "operator metrics         %s", url)
	}
	if url, err := os.ReadFile(opts.path(prometheusFile)); err == nil {
		fmt.Fprintf(opts.Out, "prometheus               %s", url)
	}
	if host, ok := registryHost(opts); ok {
		fmt.Fprintf(opts.Out, "nodes' registry          %s (plain HTTP)\n", host)
	}
	return printVMNodes(ctx, opts)
}

func countReadyNodes(ctx context.Context, kubeconfig string) (ready, total int, err error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return 0, 0, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	for i := range nodes.Items {
		if simnode.Ready(&nodes.Items[i]) {
			ready++
		}
	}
	return ready, len(nodes.Items), nil
}

// running reports whether the supervisor lives and the cluster is up.
func running(opts Options) bool {
	_, ok := supervisorPid(opts)
	if !ok {
		return false
	}
	_, err := os.Stat(opts.path(readyFile))
	return err == nil
}

// supervisorPid returns the supervisor's pid when it still runs.
func supervisorPid(opts Options) (int, bool) {
	data, err := os.ReadFile(opts.path(supervisorPidFile))
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil || !proc.Alive(pid) {
		return 0, false
	}
	return pid, true
}

// printUsage says how to use the sandbox. Without a kubectl on PATH it
// names the one built with the control plane.
func printUsage(opts Options, builtKubectl string) {
	kubectl := "kubectl"
	if _, err := exec.LookPath("kubectl"); err != nil {
		kubectl = builtKubectl
	}
	fmt.Fprintf(opts.Out, `
The sandbox is up. Point kubectl at it with:

  export KUBECONFIG=%[1]s
  %[2]s get nodes
  %[2]s get skyhooks,deploymentpolicies,packagesets -A
  %[2]s get nodes -L skyhook.nvidia.com/status_demo
  %[2]s get pods -n %[4]s

Status: skyhook sandbox status --state-dir %[3]s
Stop:   skyhook sandbox down --state-dir %[3]s
`, opts.path(kubeconfigFile), kubectl, opts.StateDir, opts.namespace())
	if info, err := os.ReadFile(opts.path(fluxFile)); err == nil && opts.Flux {
		fmt.Fprintf(opts.Out, "\nFlux (docs/gitops.md):\n%s", info)
	}
	if url, err := os.ReadFile(opts.path(prometheusFile)); err == nil {
		fmt.Fprintf(opts.Out, `
Real nodes %[1]v (label %[2]s=%[3]s): their pods run on this machine, and
the steps of Skyhooks that select them run here as root (docs/sandbox.md).
The operator runs on them, installed with its chart (release %[4]s):
  %[5]s -n %[6]s get pods -o wide
Prometheus scrapes it (the chart's ServiceMonitor and alerts); its API and
UI, from this machine: %[7]s
`, opts.realNodes(), kubeletnode.Label, kubeletnode.LabelValue, chartinstall.ReleaseName, kubectl, opts.namespace(), strings.TrimSpace(string(url)))
		return
	}
	if host, ok := registryHost(opts); ok && opts.VMNodes > 0 {
		fmt.Fprintf(opts.Out, `
Virtual machines %[1]v (label %[2]s=%[3]s): each boots its own kernel with
systemd, and the steps of Skyhooks that select it run on its own disk; a
reboot interrupt reboots it (docs/sandbox.md). Serial consoles:
%[4]s
They pull images from %[5]s (plain HTTP).
`, opts.vmNodes(), kubeletnode.Label, vmnode.LabelValue, filepath.Join(opts.path(clusterDir), "nodes", "<name>", "console.log"), host)
		return
	}
	if host, ok := registryHost(opts); ok {
		fmt.Fprintf(opts.Out, `
Real node %[1]s (label %[2]s=%[3]s): its pods run on this machine, and the
steps of Skyhooks that select it run here as root (docs/sandbox.md).
It pulls images from %[4]s (plain HTTP).
`, RealNodeName, kubeletnode.Label, kubeletnode.LabelValue, host)
	}
}
