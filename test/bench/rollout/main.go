// Command rollout measures a rollout at fleet scale and prints a table:
// N simulated nodes, P independent packages whose apply and config stages
// take a set time, a 10% budget, then an upgrade of the packages. One row
// per nodes × packages × phase (install, upgrade), each nodes × packages
// pair on a cluster and operator of its own. A row reports the makespan
// against the ideal schedule, the most nodes in progress at once, the
// operator's CPU (in all, and per 1,000 node-stages), its reconcile pass
// time (p50/p99 from its histogram), its mutating requests per node-stage
// (from its client metrics; by verb and resource from the apiserver's
// audit log with -audit), its peak RSS, the Skyhook's size, and the
// control plane's CPU split into the simulator (KWOK) and the rest
// (apiserver, etcd, controller-manager; also per 1,000 node-stages), and
// the stage pods created per node. The operator runs as its own
// process, the cmd/manager binary, built here.
//
// The simulated cluster is sized by cluster.ScaleFor (KWOK shards,
// parallelism, heartbeat, control plane limits); what was used is printed
// to stderr.
//
//	go run ./test/bench/rollout -nodes 1000,5000,10000 -packages 1,5
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
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/scheme"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// auditMaxNodes is the largest fleet measured with the audit log: above
// it the apiserver's blocking audit writes would be part of what is
// measured, and the client metrics count the requests anyway.
const auditMaxNodes = 5000

type settings struct {
	// chain: each package depends on the one before it.
	chain   bool
	stage   time.Duration
	percent int
	audit   bool
	profile string
	phases  []string
	window  time.Duration
	kind    skyhookv1.RolloutKind
	// operatorArgs are passed to the operator after the bench's own.
	operatorArgs []string
	// memoryLimit is the operator's GOMEMLIMIT ("" for none), what its
	// container's memory limit sets in a cluster (90 % of it).
	memoryLimit string
	// heapProfile: write the operator's heap profile at the end of each
	// phase to <heapProfile>-<nodes>x<packages>-<phase>.pprof.
	heapProfile string
}

func main() {
	nodesFlag := flag.String("nodes", "100,1000", "comma-separated node counts")
	packagesFlag := flag.String("packages", "1", "comma-separated package counts, each at most 26 (independent, so they run side by side on a node)")
	stage := flag.Duration("stage", 2*time.Second, "simulated duration of each stage")
	percent := flag.Int("budget", 10, "interruption budget, percent of the nodes")
	audit := flag.Bool("audit", true, fmt.Sprintf("also break the operator's requests down by verb and resource with the apiserver's audit log (which slows the apiserver); never above %d nodes", auditMaxNodes))
	idle := flag.Duration("idle", 0, "instead of rollouts: start each cluster, measure its control plane idle for this long, and print how long the start took, the idle CPU per second and each component's peak RSS")
	profile := flag.String("profile", "", "write a CPU profile of the operator during each install to <profile>-<nodes>x<packages>.pprof")
	phases := flag.String("phases", "install,upgrade", "the phases to run, in order: install, or install,upgrade")
	kindName := flag.String("kind", "skyhook", "the kind rolled out: skyhook, or nodewright (the same spec as a NodeWright)")
	window := flag.Duration("window", 0, "end a phase after this long even if the rollout is not done (0: at Ready); a cut phase counts the stages it started, and has no makespan")
	chain := flag.Bool("chain", false, "make each package depend on the one before it (pkg-b on pkg-a...), so a node runs them one after another")
	operatorArgs := flag.String("operator-args", "", "more arguments for the operator, space separated (--stage-runs=false: a pod per stage, as before stage runs)")
	memoryLimit := flag.String("operator-memory-limit", "", "the operator's GOMEMLIMIT (e.g. 270MiB: what a 300 MiB container limit sets), in its environment only; empty for none")
	heapProfile := flag.String("heap-profile", "", "write the operator's heap profile at the end of each phase to <heap-profile>-<nodes>x<packages>-<phase>.pprof")
	flag.Parse()
	kind, err := kindOf(*kindName)
	check(err)
	nodeCounts, packageCounts := intList(*nodesFlag), intList(*packagesFlag)
	root, err := testenv.RepoRoot()
	check(err)
	manager := filepath.Join(os.TempDir(), "skyhook-bench-manager")
	build := exec.Command("go", "build", "-o", manager, "./cmd/manager")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	check(build.Run())

	if *idle > 0 {
		fmt.Println("| nodes | start | simulator CPU s/s idle | apiserver+etcd+kcm CPU s/s idle | by component: CPU s/s idle, peak RSS |")
		fmt.Println("|---|---|---|---|---|")
		for _, n := range nodeCounts {
			fmt.Println(idleRow(n, *idle))
		}
		return
	}
	fmt.Println("| nodes | packages | phase | makespan | ideal | ratio | most in progress (budget) | most with a live stage pod | operator CPU s | operator CPU s per 1,000 node-stages | passes | pass p50 / p99 | mutating requests per node-stage | audit: per node-stage by verb and resource | operator peak RSS (of it anonymous) | Skyhook size | simulator CPU s | apiserver+etcd+kcm CPU s | apiserver+etcd+kcm CPU s per 1,000 node-stages | stage pods per node | machine busy | stage end → delete p50 / p90 |")
	fmt.Println("|" + strings.Repeat("---|", 22))
	for _, n := range nodeCounts {
		for _, p := range packageCounts {
			set := settings{chain: *chain, stage: *stage, percent: *percent, audit: *audit && n <= auditMaxNodes, profile: *profile,
				phases: strings.Split(*phases, ","), window: *window, kind: kind, operatorArgs: strings.Fields(*operatorArgs),
				memoryLimit: *memoryLimit, heapProfile: *heapProfile}
			if *audit && !set.audit {
				fmt.Fprintf(os.Stderr, "%d nodes: no audit log above %d nodes\n", n, auditMaxNodes)
			}
			run(manager, n, p, set)
		}
	}
}

// idleRow starts a cluster of n nodes and measures it idle.
func idleRow(n int, idle time.Duration) string {
	scale := cluster.ScaleFor(n)
	fmt.Fprintf(os.Stderr, "starting a cluster with %d nodes: %s\n", n, scale)
	began := time.Now()
	c, err := cluster.Start(context.Background(), cluster.Options{Scale: scale, Log: os.Stderr,
		Nodes: simnode.Numbered("node", n, map[string]string{"fleet": "bench"})})
	check(err)
	defer c.Stop()
	start := time.Since(began)
	fmt.Fprintf(os.Stderr, "up in %s; idle for %s\n", start.Round(time.Second), idle)
	procs := c.Processes()
	names := make([]string, 0, len(procs))
	cpu0 := map[string]float64{}
	for name, pid := range procs {
		names = append(names, name)
		cpu0[name] = cpuSeconds(pid)
	}
	sort.Strings(names)
	sim0, plane0 := controlPlaneCPU(c)
	time.Sleep(idle)
	sim1, plane1 := controlPlaneCPU(c)
	var rss []string
	for _, name := range names {
		rss = append(rss, fmt.Sprintf("%s %.2f, %d MiB", name, (cpuSeconds(procs[name])-cpu0[name])/idle.Seconds(), peakRSS(procs[name])/1024))
	}
	return fmt.Sprintf("| %d | %.0f s | %.2f | %.2f | %s |", n, start.Seconds(),
		(sim1-sim0)/idle.Seconds(), (plane1-plane0)/idle.Seconds(), strings.Join(rss, ", "))
}

func intList(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		check(err)
		out = append(out, n)
	}
	return out
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// sample is what is read at the start and the end of a phase.
type sample struct {
	at          time.Time
	metrics     operatorMetrics
	operatorCPU float64
	simCPU      float64
	planeCPU    float64
	machine     machineCPU
	auditLines  int
}

func takeSample(c *cluster.Cluster, metricsURL, controller string, pid int) sample {
	s := sample{at: time.Now(), metrics: scrape(metricsURL, controller), operatorCPU: cpuSeconds(pid), machine: readMachineCPU(), auditLines: auditLines(c.AuditLog)}
	s.simCPU, s.planeCPU = controlPlaneCPU(c)
	return s
}

// run measures one fleet size and package count and prints a row as each
// phase ends (a long run shows its install before its upgrade).
func run(manager string, n, packages int, set settings) {
	ctx := context.Background()
	crds, err := config.CRDs()
	check(err)
	scale := cluster.ScaleFor(n)
	fmt.Fprintf(os.Stderr, "starting a cluster with %d nodes for %d package(s): %s, audit %t\n", n, packages, scale, set.audit)
	began := time.Now()
	c, err := cluster.Start(ctx, cluster.Options{CRDs: crds, Audit: set.audit, Scale: scale,
		Nodes: simnode.Numbered("node", n, map[string]string{"fleet": "bench"})})
	check(err)
	defer c.Stop()
	fmt.Fprintf(os.Stderr, "cluster with %d nodes up in %s\n", n, time.Since(began).Round(time.Second))
	cl, err := client.New(c.Config, client.Options{Scheme: scheme.New()})
	check(err)
	check(cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "skyhook-system"}}))

	proc, metricsURL, pprofURL := startManager(manager, c, set)
	defer func() { _ = proc.Process.Kill(); _ = proc.Wait() }()
	check(operator.WaitAdmission(ctx, cl, nil))

	bench := benchRollout{ref: set.kind.Named("bench"), cl: cl}
	controller := strings.ToLower(set.kind.Kind) // the reconcile metrics' controller label
	watcher, err := testenv.WatchBusyNodes(ctx, c, "fleet=bench", bench.ref)
	check(err)
	podNodes, err := testenv.WatchPodNodes(ctx, c, "skyhook-system", bench.ref)
	check(err)
	capacity := max(1, n*set.percent/100)
	// The ideal schedule: the nodes go in waves of the budget, and each
	// wave takes its two stages (apply and config for an install, upgrade
	// and config for an upgrade) one after the other. The packages are
	// independent, so they run side by side on a node: more packages add
	// no time to the ideal, only work for the operator.
	waves := int(math.Ceil(float64(n) / float64(capacity)))
	ideal := time.Duration(waves) * 2 * set.stage
	nodeStages := float64(n * packages * 2)
	spec := skyhookv1.SkyhookSpec{
		NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "bench"}},
		InterruptionBudget: skyhookv1.InterruptionBudget{Percent: &set.percent},
		Packages:           benchPackages(packages, set.stage, set.chain),
	}
	poll := 250 * time.Millisecond
	if n > auditMaxNodes {
		poll = time.Second // each read of a large Skyhook costs the apiserver
	}
	anonPeak := watchPeakAnon(ctx, proc.Process.Pid)
	for _, phase := range set.phases {
		before := takeSample(c, metricsURL, controller, proc.Process.Pid)
		podsBefore := podNodes.Created()
		podNodes.TakeReactions() // this phase's only
		if phase == "install" {
			if set.profile != "" {
				go captureProfile(pprofURL, fmt.Sprintf("%s-%dx%d.pprof", set.profile, n, packages), ideal)
			}
			check(bench.create(ctx, spec))
		} else {
			check(bench.upgrade(ctx, "1.1.0"))
		}
		// 20 ideals, and 0.3 s a node: 10,000 nodes went at about 3 a
		// second on this 2-core machine, the apiserver the limit.
		timeout := 20*ideal + time.Duration(n)*300*time.Millisecond + time.Minute
		if set.window > 0 {
			timeout = set.window
		}
		err := bench.waitReady(ctx, poll, timeout)
		cut := set.window > 0 && wait.Interrupted(err)
		if !cut {
			check(err)
		}
		makespan := time.Since(before.at)
		nodeStages := nodeStages
		span, ratio := fmt.Sprintf("%.1f s", makespan.Seconds()), fmt.Sprintf("%.2f", makespan.Seconds()/ideal.Seconds())
		if cut {
			// Cut short: the stages started in the window are the work.
			nodeStages = float64(podNodes.Created() - podsBefore)
			span, ratio = fmt.Sprintf("cut at %.0f s (%.0f of %d node-stages started)", makespan.Seconds(), nodeStages, n*packages*2), "-"
		}
		time.Sleep(500 * time.Millisecond) // the last writes reach the audit log and the metrics
		after := takeSample(c, metricsURL, controller, proc.Process.Pid)
		if set.heapProfile != "" {
			saveURL(strings.TrimSuffix(pprofURL, "profile")+"heap?gc=1", fmt.Sprintf("%s-%dx%d-%s.pprof", set.heapProfile, n, packages, phase))
		}
		byAudit := "(-audit off)"
		if set.audit {
			byAudit = requestsPerNodeStage(c.AuditLog, before.auditLines, nodeStages)
		}
		operatorCPU, planeCPU := after.operatorCPU-before.operatorCPU, after.planeCPU-before.planeCPU
		podsPerNode := float64(podNodes.Created()-podsBefore) / float64(n)
		pass := after.metrics.reconcile.minus(before.metrics.reconcile)
		fmt.Printf("| %d | %d | %s | %s | %.1f s | %s | %d (%d) | %d | %.1f | %.2f | %.0f | %s / %s | %s | %s | %d MiB (%d) | %s | %.1f | %.1f | %.2f | %.2f | %.0f%% | %s |\n",
			n, packages, phase, span, ideal.Seconds(), ratio,
			watcher.TakeMost(), capacity, podNodes.TakeMost(), operatorCPU, 1000*operatorCPU/nodeStages,
			pass.count(), ms(pass.quantile(0.5)), ms(pass.quantile(0.99)),
			mutatingPerNodeStage(before.metrics.requests, after.metrics.requests, nodeStages), byAudit,
			peakRSS(proc.Process.Pid)/1024, anonPeak()/1024, kib(rolloutSize(c, bench.path())),
			after.simCPU-before.simCPU, planeCPU, 1000*planeCPU/nodeStages, podsPerNode, after.machine.busyPercent(before.machine),
			reactionQuantiles(podNodes.TakeReactions()))
	}
}

// reactionQuantiles reads the median and 90th percentile of the sorted
// reactions, with how many there were.
func reactionQuantiles(sorted []time.Duration) string {
	if len(sorted) == 0 {
		return "-"
	}
	at := func(q float64) time.Duration { return sorted[int(q*float64(len(sorted)-1))] }
	return fmt.Sprintf("%.2f s / %.2f s (%d pods)", at(0.5).Seconds(), at(0.9).Seconds(), len(sorted))
}

func ms(seconds float64) string {
	if math.IsNaN(seconds) {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", 1000*seconds)
}

func kib(bytes int) string {
	if bytes < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f KiB", float64(bytes)/1024)
}

// benchPackages are n packages whose simulated stages take stage:
// "tuning" alone, as the rows measured before had it, or pkg-a, pkg-b...,
// independent, or with chain each depending on the one before.
func benchPackages(n int, stage time.Duration, chain bool) skyhookv1.Packages {
	pkg := func() skyhookv1.Package {
		return skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Version: "1.0.0"}, Image: "ghcr.io/nvidia/tuning",
			Env: []corev1.EnvVar{{Name: simnode.DurationEnv, Value: stage.String()}}}
	}
	if n <= 1 {
		return skyhookv1.Packages{"tuning": pkg()}
	}
	out := skyhookv1.Packages{}
	for i := range min(n, 26) { // a package name ends with a letter
		p := pkg()
		if chain && i > 0 {
			p.DependsOn = map[string]string{fmt.Sprintf("pkg-%c", 'a'+i-1): "1.0.0"}
		}
		out[fmt.Sprintf("pkg-%c", 'a'+i)] = p
	}
	return out
}

// startManager runs the operator binary against the cluster as the
// operator user, with its webhooks on localhost, and returns it with the
// address of its metrics.
func startManager(manager string, c *cluster.Cluster, set settings) (*exec.Cmd, string, string) {
	ports, err := proc.FreePorts(3)
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
	cmd.Args = append(cmd.Args, set.operatorArgs...)
	if set.memoryLimit != "" {
		// The operator's alone: the control plane's Go binaries inherit the
		// bench's environment and must keep their own defaults.
		cmd.Env = append(os.Environ(), "GOMEMLIMIT="+set.memoryLimit)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	check(cmd.Start())
	return cmd, "http://" + metricsAddr + "/metrics", "http://" + pprofAddr + "/debug/pprof/profile"
}

// operatorMetrics is what the bench reads off the operator's metrics.
type operatorMetrics struct {
	// reconcile is the Skyhook controller's reconcile time histogram.
	reconcile histogram
	// requests are the operator's API requests by HTTP method.
	requests map[string]float64
}

// histogram is a Prometheus histogram: cumulative counts by upper bound.
type histogram struct {
	bounds []float64 // ascending, the last +Inf
	counts []float64
}

func (h histogram) count() float64 {
	if len(h.counts) == 0 {
		return 0
	}
	return h.counts[len(h.counts)-1]
}

// minus is the histogram of what was observed between before and h.
func (h histogram) minus(before histogram) histogram {
	out := histogram{bounds: h.bounds, counts: make([]float64, len(h.counts))}
	for i := range h.counts {
		out.counts[i] = h.counts[i]
		if i < len(before.counts) {
			out.counts[i] -= before.counts[i]
		}
	}
	return out
}

// quantile estimates the q-quantile as Prometheus' histogram_quantile
// does: linear interpolation within the bucket the rank falls in (from 0
// for the first bucket), the largest finite bound when it falls in the
// +Inf bucket; NaN without observations.
func (h histogram) quantile(q float64) float64 {
	total := h.count()
	if total == 0 || len(h.bounds) < 2 {
		return math.NaN()
	}
	rank := q * total
	i := sort.Search(len(h.counts), func(i int) bool { return h.counts[i] >= rank })
	if i >= len(h.bounds)-1 {
		return h.bounds[len(h.bounds)-2]
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = h.bounds[i-1], h.counts[i-1]
	}
	inBucket := h.counts[i] - below
	if inBucket == 0 {
		return h.bounds[i]
	}
	return lower + (h.bounds[i]-lower)*(rank-below)/inBucket
}

// scrape reads the operator's metrics: the rollout controller's (skyhook or nodewright)
// controller_runtime_reconcile_time_seconds and rest_client_requests_total
// by method.
func scrape(url, controller string) operatorMetrics {
	m := operatorMetrics{requests: map[string]float64{}}
	resp, err := http.Get(url)
	if err != nil {
		return m
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return m
	}
	if f := families["controller_runtime_reconcile_time_seconds"]; f != nil {
		for _, metric := range f.GetMetric() {
			if label(metric.GetLabel(), "controller") != controller {
				continue
			}
			for _, b := range metric.GetHistogram().GetBucket() {
				m.reconcile.bounds = append(m.reconcile.bounds, b.GetUpperBound())
				m.reconcile.counts = append(m.reconcile.counts, float64(b.GetCumulativeCount()))
			}
			if n := len(m.reconcile.bounds); n == 0 || !math.IsInf(m.reconcile.bounds[n-1], 1) {
				m.reconcile.bounds = append(m.reconcile.bounds, math.Inf(1))
				m.reconcile.counts = append(m.reconcile.counts, float64(metric.GetHistogram().GetSampleCount()))
			}
		}
	}
	if f := families["rest_client_requests_total"]; f != nil {
		for _, metric := range f.GetMetric() {
			m.requests[label(metric.GetLabel(), "method")] += metric.GetCounter().GetValue()
		}
	}
	return m
}

func label[L interface {
	GetName() string
	GetValue() string
}](labels []L, name string) string {
	for _, l := range labels {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// mutatingPerNodeStage is the operator's POST, PUT, PATCH and DELETE
// requests between two scrapes per node-stage, in all and by method.
func mutatingPerNodeStage(before, after map[string]float64, nodeStages float64) string {
	total := 0.0
	var parts []string
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		d := after[method] - before[method]
		total += d
		if d > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f", method, d/nodeStages))
		}
	}
	return fmt.Sprintf("%.2f (%s)", total/nodeStages, strings.Join(parts, ", "))
}

// rolloutSize is the length of the rollout's JSON as the apiserver serves
// it at path, or -1.
func rolloutSize(c *cluster.Cluster, path string) int {
	hc, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return -1
	}
	resp, err := hc.Get(c.Config.Host + path)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return -1
	}
	return len(body)
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

// requestsPerNodeStage counts the operator's mutating requests in the
// audit log after line skip, per node-stage, by verb and resource.
func requestsPerNodeStage(path string, skip int, nodeStages float64) string {
	f, err := os.Open(path)
	check(err)
	defer f.Close()
	counts := map[string]int{}
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
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(counts[k])/nodeStages))
	}
	return strings.Join(parts, ", ")
}

// controlPlaneCPU is the CPU time of the simulator (the KWOK processes)
// and of the rest of the control plane (etcd, the apiserver, the
// controller-manager).
func controlPlaneCPU(c *cluster.Cluster) (sim, plane float64) {
	for name, pid := range c.Processes() {
		if cluster.IsSimulator(name) {
			sim += cpuSeconds(pid)
		} else {
			plane += cpuSeconds(pid)
		}
	}
	return sim, plane
}

// machineCPU is the machine's busy and total CPU time from /proc/stat, in
// ticks.
type machineCPU struct{ busy, total float64 }

func readMachineCPU() machineCPU {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)[1:] // user nice system idle iowait irq softirq steal ...
	var m machineCPU
	for i, f := range fields {
		v, _ := strconv.ParseFloat(f, 64)
		if i >= 8 { // guest time is counted in user already
			break
		}
		m.total += v
		if i != 3 && i != 4 { // idle, iowait
			m.busy += v
		}
	}
	return m
}

// busyPercent is how busy every core of the machine was since before (all
// processes, the bench's own and other users' included).
func (m machineCPU) busyPercent(before machineCPU) float64 {
	if m.total <= before.total {
		return math.NaN()
	}
	return 100 * (m.busy - before.busy) / (m.total - before.total)
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
func peakRSS(pid int) int { return statusKiB(pid, "VmHWM:") }

// statusKiB is a field of the process's /proc status in KiB, 0 when the
// process is gone.
func statusKiB(pid int, field string) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, field) {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return kb
		}
	}
	return 0
}

// watchPeakAnon samples the process's anonymous resident memory
// (RssAnon) until ctx ends and returns a reader of the most seen, in KiB.
// VmHWM counts the binary's code pages too, which the kernel can drop
// and read again; a container's memory limit is met or missed by the
// anonymous part, and the kernel keeps no peak of it.
func watchPeakAnon(ctx context.Context, pid int) func() int {
	var peak atomic.Int64
	go func() {
		for ctx.Err() == nil {
			if kb := int64(statusKiB(pid, "RssAnon:")); kb > peak.Load() {
				peak.Store(kb)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return func() int { return int(peak.Load()) }
}

// captureProfile records the operator's CPU for about the ideal makespan
// (the install phase) into file.
func captureProfile(url, file string, ideal time.Duration) {
	seconds := max(int(ideal.Seconds()), 5)
	saveURL(fmt.Sprintf("%s?seconds=%d", url, seconds), file)
}

// saveURL writes what a GET of url returns to file; a failure is printed,
// not fatal (a profile is a by-product of the run).
func saveURL(url, file string) {
	resp, err := http.Get(url)
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
