package chaos

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// A fault kind, and how many of each a run injects.
type faultKind string

const (
	killReplica      faultKind = "operator replica SIGKILL"
	killLeader       faultKind = "leader SIGKILL"
	restartAPIServer faultKind = "kube-apiserver restart"
	restartEtcd      faultKind = "etcd restart"
	webhookDown      faultKind = "webhook unreachable"
	nodeNotReady     faultKind = "node NotReady and back"
	deleteStagePod   faultKind = "stage pod deleted"
)

var faultKinds = []faultKind{killReplica, killLeader, restartAPIServer, restartEtcd, webhookDown, nodeNotReady, deleteStagePod}

// mode is the short form (CI) or the full one (make test-chaos).
type mode struct {
	name   string
	counts map[faultKind]int
	nodes  int
}

func chaosMode() mode {
	if os.Getenv("SKYHOOK_CHAOS") == "full" {
		return mode{name: "full", nodes: 80, counts: map[faultKind]int{
			killReplica: 20, killLeader: 3, restartAPIServer: 3, restartEtcd: 3, webhookDown: 3, nodeNotReady: 3, deleteStagePod: 3}}
	}
	return mode{name: "short", nodes: 60, counts: map[faultKind]int{
		killReplica: 4, killLeader: 1, restartAPIServer: 1, restartEtcd: 1, webhookDown: 1, nodeNotReady: 1, deleteStagePod: 1}}
}

// seed is SKYHOOK_CHAOS_SEED, or the clock's.
func seed(t *testing.T) int64 {
	if s := os.Getenv("SKYHOOK_CHAOS_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("SKYHOOK_CHAOS_SEED=%q: want an integer", s)
		}
		return n
	}
	return time.Now().UnixNano()
}

// plan is the faults of a run in a random order.
func plan(m mode, r *rand.Rand) []faultKind {
	var faults []faultKind
	for _, k := range faultKinds {
		for range m.counts[k] {
			faults = append(faults, k)
		}
	}
	r.Shuffle(len(faults), func(i, j int) { faults[i], faults[j] = faults[j], faults[i] })
	return faults
}

// injection is one fault: when it started and when it was over (the
// component back, the webhook reachable again).
type injection struct {
	kind       faultKind
	start, end time.Time
	detail     string
}

// injector injects faults into the cluster and the operators.
type injector struct {
	ops *operators
	obs *observer
	r   *rand.Rand
}

func (in *injector) inject(ctx context.Context, kind faultKind) (injection, error) {
	inj := injection{kind: kind, start: time.Now()}
	var err error
	switch kind {
	case killReplica:
		i := in.r.Intn(2)
		inj.detail = fmt.Sprintf("replica %d", i)
		err = in.ops.kill(env, i, time.Duration(500+in.r.Intn(1500))*time.Millisecond)
	case killLeader:
		i := in.ops.leader()
		if i < 0 {
			i = in.r.Intn(2) // between leaders: either may be next
		}
		inj.detail = fmt.Sprintf("replica %d", i)
		err = in.ops.kill(env, i, time.Duration(500+in.r.Intn(1500))*time.Millisecond)
	case restartAPIServer:
		err = env.Restart(ctx, "kube-apiserver")
	case restartEtcd:
		err = env.Restart(ctx, "etcd")
	case webhookDown:
		d := time.Duration(3+in.r.Intn(5)) * time.Second
		inj.detail = d.String()
		in.ops.setWebhookDown(true)
		time.Sleep(d)
		in.ops.setWebhookDown(false)
	case nodeNotReady:
		err = in.nodeNotReady(ctx, &inj)
	case deleteStagePod:
		err = in.deleteStagePod(ctx, &inj)
	}
	inj.end = time.Now()
	return inj, err
}

// nodeNotReady takes a random node down for a few seconds: it comes back
// with a new boot ID, as after an unplanned reboot.
func (in *injector) nodeNotReady(ctx context.Context, inj *injection) error {
	name := fmt.Sprintf("chaos-%d", in.r.Intn(len(fleet())))
	d := time.Duration(2+in.r.Intn(4)) * time.Second
	inj.detail = name + " for " + d.String()
	if err := env.Reboot(ctx, name, fmt.Sprintf("unplanned-%d", in.r.Int63()), d); err != nil {
		return err
	}
	return env.WaitNodesReady(ctx, time.Minute, name)
}

// deleteStagePod deletes a stage pod whose stage has not finished, as an
// admin cleaning up might (one that finished could be deleted before the
// operator read it, and then its stage must run again).
func (in *injector) deleteStagePod(ctx context.Context, inj *injection) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		pods, err := env.Clientset.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: stagepod.SkyhookLabel})
		if err == nil {
			var running []corev1.Pod
			for _, p := range pods.Items {
				if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && !stageSucceeded(&p) {
					running = append(running, p)
				}
			}
			if len(running) > 0 {
				p := running[in.r.Intn(len(running))]
				in.obs.deleted(p.Name)
				inj.detail = p.Name
				return env.Clientset.CoreV1().Pods(operatorNamespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	inj.detail = "none running"
	return nil
}

// conflictingWriter patches an annotation of random nodes until ctx ends,
// as another controller would, so the operator's writes meet conflicts.
func conflictingWriter(ctx context.Context, r *rand.Rand, nodes int) (patches func() int) {
	count := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			name := fmt.Sprintf("chaos-%d", r.Intn(nodes))
			patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"example.com/inventory":"scan-%d"}}}`, count)
			if _, err := env.Clientset.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err == nil {
				count++
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return func() int { <-done; return count }
}

// report is the run's table: faults by kind, how long the rollout took
// to make progress again after each kind (p50, max), and the violations.
func report(injections []injection, obs *observer, seed int64, m mode, patches, replicaExits int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "chaos run (%s): seed %d, %d nodes; replay with SKYHOOK_CHAOS_SEED=%d\n\n", m.name, seed, m.nodes, seed)
	fmt.Fprintf(&b, "| fault | injected | recovered | recovery p50 | recovery max |\n|---|---|---|---|---|\n")
	for _, k := range faultKinds {
		var recoveries []time.Duration
		n := 0
		for _, inj := range injections {
			if inj.kind != k {
				continue
			}
			n++
			if d, ok := obs.progressAfter(inj.end); ok {
				recoveries = append(recoveries, d)
			}
		}
		p50, worst := "-", "-"
		if len(recoveries) > 0 {
			sort.Slice(recoveries, func(i, j int) bool { return recoveries[i] < recoveries[j] })
			p50 = recoveries[len(recoveries)/2].Round(100 * time.Millisecond).String()
			worst = recoveries[len(recoveries)-1].Round(100 * time.Millisecond).String()
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |\n", k, n, len(recoveries), p50, worst)
	}
	created, extra := obs.extraPods()
	fmt.Fprintf(&b, "| watch streams ended by the apiserver | every 20–40 s | | | |\n")
	fmt.Fprintf(&b, "| node annotations patched by another writer | %d | | | |\n\n", patches)
	fmt.Fprintf(&b, "operator replicas that exited by themselves (lost their lease while the apiserver was away) and were started again: %d\n", replicaExits)
	fmt.Fprintf(&b, "stage pods created: %d, of which extra because of faults: %d\n", created, extra)
	fmt.Fprintf(&b, "invariant violations: %d\n", len(obs.Violations()))
	for _, v := range obs.Violations() {
		fmt.Fprintf(&b, "  - %s\n", v)
	}
	return b.String()
}
