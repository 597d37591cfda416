// Command rollout measures a rollout at fleet scale and prints a table:
// N simulated nodes, one package whose apply and config stages take a set
// time, a 10% budget, then an upgrade of the package. For each N it reports
// the makespan against the ideal schedule (waves × stages × stage time), the
// most nodes in progress at once, the operator's mutating API requests per
// node by verb and resource (from the apiserver's audit log), and the
// operator's CPU seconds and peak RSS (it runs as its own process, the
// cmd/manager binary, built here).
//
//	go run ./test/bench/rollout -nodes 100,1000
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/scheme"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/test/testenv"
)

func main() {
	nodesFlag := flag.String("nodes", "100,1000", "comma-separated node counts")
	stage := flag.Duration("stage", 2*time.Second, "simulated duration of each stage")
	percent := flag.Int("budget", 10, "interruption budget, percent of the nodes")
	audit := flag.Bool("audit", true, "count the operator's requests with the apiserver's audit log (which slows the apiserver)")
	profile := flag.String("profile", "", "write a CPU profile of the operator during each install to <profile>-<nodes>.pprof")
	packages := flag.Int("packages", 1, "packages in the Skyhook, at most 26 (independent, so they run side by side on a node)")
	flag.Parse()
	root, err := testenv.RepoRoot()
	check(err)
	manager := filepath.Join(os.TempDir(), "skyhook-bench-manager")
	build := exec.Command("go", "build", "-o", manager, "./cmd/manager")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	check(build.Run())

	fmt.Println("| nodes | packages | phase | makespan | ideal | ratio | most in progress (budget) | mutating requests per node | reconciles (mean time) | operator CPU s | operator peak RSS | control plane CPU s | machine busy |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range strings.Split(*nodesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		check(err)
		for _, row := range run(manager, n, *packages, *stage, *percent, *audit, *profile) {
			fmt.Println(row)
		}
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run measures one fleet size and returns its table rows.
func run(manager string, n, packages int, stage time.Duration, percent int, audit bool, profile string) []string {
	ctx := context.Background()
	crds, err := config.CRDs()
	check(err)
	fmt.Fprintf(os.Stderr, "starting a cluster with %d nodes\n", n)
	c, err := cluster.Start(ctx, cluster.Options{CRDs: crds, Audit: audit, Nodes: cluster.NumberedNodes("node", n, map[string]string{"fleet": "bench"})})
	check(err)
	defer c.Stop()
	cl, err := client.New(c.Config, client.Options{Scheme: scheme.New()})
	check(err)
	check(cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "skyhook-system"}}))

	proc, metricsURL, pprofURL := startManager(manager, c)
	defer func() { _ = proc.Process.Kill(); _ = proc.Wait() }()
	check(operator.WaitAdmission(ctx, cl, nil))

	watcher, err := testenv.WatchBusyNodes(ctx, c, "fleet=bench", "bench")
	check(err)
	capacity := max(1, n*percent/100)
	ideal := time.Duration(math.Ceil(float64(n)/float64(capacity))) * 2 * stage
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "bench"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Percent: &percent},
			Packages:           benchPackages(packages, stage),
		},
	}
	var rows []string
	for _, phase := range []string{"install", "upgrade"} {
		auditStart := auditLines(c.AuditLog)
		passesStart, passTimeStart := reconciles(metricsURL)
		cpuStart := cpuSeconds(proc.Process.Pid)
		planeStart := controlPlaneCPU(c)
		start := time.Now()
		if phase == "install" {
			if profile != "" {
				go captureProfile(pprofURL, fmt.Sprintf("%s-%d.pprof", profile, n), ideal)
			}
			check(cl.Create(ctx, sk))
		} else {
			check(cl.Get(ctx, client.ObjectKeyFromObject(sk), sk))
			for name, p := range sk.Spec.Packages {
				p.Version = "1.1.0"
				sk.Spec.Packages[name] = p
			}
			check(cl.Update(ctx, sk))
		}
		check(waitReady(ctx, cl, sk, 20*ideal+time.Minute))
		makespan := time.Since(start)
		time.Sleep(500 * time.Millisecond) // the last writes reach the audit log
		requests := "(not counted: -audit=false)"
		if audit {
			requests = requestsPerNode(c.AuditLog, auditStart, n)
		}
		operatorCPU, planeCPU := cpuSeconds(proc.Process.Pid)-cpuStart, controlPlaneCPU(c)-planeStart
		passes, passTime := reconciles(metricsURL)
		passes, passTime = passes-passesStart, passTime-passTimeStart
		rows = append(rows, fmt.Sprintf("| %d | %d | %s | %.1f s | %.1f s | %.2f | %d (%d) | %s | %.0f (%.1f ms) | %.1f | %d MiB | %.1f | %.0f%% |",
			n, packages, phase, makespan.Seconds(), ideal.Seconds(), makespan.Seconds()/ideal.Seconds(),
			watcher.TakeMost(), capacity, requests, passes, 1000*passTime/max(passes, 1), operatorCPU, peakRSS(proc.Process.Pid)/1024,
			planeCPU, 100*(operatorCPU+planeCPU)/(float64(runtime.NumCPU())*makespan.Seconds())))
	}
	return rows
}

// benchPackages are n independent packages whose simulated stages take
// stage: "tuning" alone, as the rows measured before had it, or pkg-a, pkg-b...
func benchPackages(n int, stage time.Duration) skyhookv1.Packages {
	pkg := func() skyhookv1.Package {
		return skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Version: "1.0.0"}, Image: "ghcr.io/nvidia/tuning",
			Env: []corev1.EnvVar{{Name: cluster.SimDurationEnv, Value: stage.String()}}}
	}
	if n <= 1 {
		return skyhookv1.Packages{"tuning": pkg()}
	}
	out := skyhookv1.Packages{}
	for i := range min(n, 26) { // a package name ends with a letter
		out[fmt.Sprintf("pkg-%c", 'a'+i)] = pkg()
	}
	return out
}

// startManager runs the operator binary against the cluster as the
// operator user, with its webhooks on localhost, and returns it with the
// address of its metrics.
func startManager(manager string, c *cluster.Cluster) (*exec.Cmd, string, string) {
	ports, err := cluster.FreePorts(3)
	check(err)
	certs, err := os.MkdirTemp("", "skyhook-bench-certs-")
	check(err)
	logFile, err := os.Create(filepath.Join(c.Dir, "logs", "operator.log"))
	check(err)
	metricsAddr := "127.0.0.1:" + strconv.Itoa(ports[1])
	pprofAddr := "127.0.0.1:" + strconv.Itoa(ports[2])
	cmd := exec.Command(manager, "--kubeconfig="+c.OperatorKubeconfig, "--namespace=skyhook-system",
		"--webhook-host=127.0.0.1", "--webhook-port="+strconv.Itoa(ports[0]), "--local-webhook-host=localhost",
		"--cert-dir="+certs, "--metrics-bind-address="+metricsAddr, "--health-probe-bind-address=0",
		"--pprof-bind-address="+pprofAddr, "--metrics-secure=false")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	check(cmd.Start())
	return cmd, "http://" + metricsAddr + "/metrics", "http://" + pprofAddr + "/debug/pprof/profile"
}

// reconciles reads the Skyhook controller's reconcile count and their
// total duration in seconds from the operator's metrics.
func reconciles(url string) (count, seconds float64) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, 0
	}
	if f := families["controller_runtime_reconcile_time_seconds"]; f != nil {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "skyhook" {
					count += float64(m.GetHistogram().GetSampleCount())
					seconds += m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return count, seconds
}

func waitReady(ctx context.Context, cl client.Client, sk *skyhookv1.Skyhook, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
			return false, nil
		}
		return conditions.IsTrue(sk, meta.ReadyCondition) && sk.Status.ObservedGeneration == sk.Generation, nil
	})
}

func auditLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		n++
	}
	return n
}

// requestsPerNode counts the operator's mutating requests in the audit log
// after line skip, per node, by verb and resource.
func requestsPerNode(path string, skip, nodes int) string {
	f, err := os.Open(path)
	check(err)
	defer f.Close()
	counts := map[string]int{}
	total := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 0; sc.Scan(); line++ {
		if line < skip {
			continue
		}
		var ev struct {
			Verb      string
			User      struct{ Username string }
			ObjectRef struct{ Resource, Subresource string }
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.User.Username != cluster.OperatorUser {
			continue
		}
		res := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		counts[ev.Verb+" "+res]++
		total++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := []string{fmt.Sprintf("%.2f", float64(total)/float64(nodes))}
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(counts[k])/float64(nodes)))
	}
	return parts[0] + " (" + strings.Join(parts[1:], ", ") + ")"
}

// controlPlaneCPU is the CPU time of etcd, the apiserver, the
// controller-manager and KWOK together.
func controlPlaneCPU(c *cluster.Cluster) float64 {
	total := 0.0
	for _, pid := range c.Processes() {
		total += cpuSeconds(pid)
	}
	return total
}

// cpuSeconds is the process's user and system CPU time.
func cpuSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data)[strings.LastIndexByte(string(data), ')')+2:])
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

// peakRSS is the process's peak resident set in KiB (VmHWM).
func peakRSS(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return kb
		}
	}
	return 0
}

// captureProfile records the operator's CPU for about the ideal makespan
// (the install phase) into file.
func captureProfile(url, file string, ideal time.Duration) {
	seconds := max(int(ideal.Seconds()), 5)
	resp, err := http.Get(fmt.Sprintf("%s?seconds=%d", url, seconds))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: profile:", err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: profile:", err)
		return
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		fmt.Fprintln(os.Stderr, "bench: profile:", err)
	}
}
