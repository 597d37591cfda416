package reconcile

import (
	"context"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/nodestate"
)

// defaultParallelism is how many nodes a pass works on at once when the
// reconciler does not say.
const defaultParallelism = 16

// nodePool runs the API requests of a pass for several nodes at once. The
// decisions (which node is active, which may start) are made one node
// after another; the requests they lead to (create and delete stage pods,
// write node records) are independent per node, and at fleet scale a pass
// that sends them one by one spends its time waiting on the API server.
type nodePool struct {
	r     *SkyhookReconciler
	sk    *skyhookv1.Skyhook
	group *errgroup.Group
	ctx   context.Context
	p     *progress
	// mu guards reports: what each advance reported, for wait to add up.
	mu      sync.Mutex
	reports []progress
}

func (r *SkyhookReconciler) pool(ctx context.Context, sk *skyhookv1.Skyhook, p *progress) *nodePool {
	group, ctx := errgroup.WithContext(ctx)
	group.SetLimit(max(1, r.Parallelism))
	return &nodePool{r: r, sk: sk, group: group, ctx: ctx, p: p}
}

// advance advances the node (see SkyhookReconciler.advance) in the pool.
// What it reports joins the pass's progress in wait, so the pass may keep
// reading its counters meanwhile.
func (n *nodePool) advance(w *nodeWork, start bool) {
	n.group.Go(func() error {
		local := progress{snapshots: n.p.snapshots, window: n.p.window}
		err := n.r.advance(n.ctx, n.sk, w, start, &local)
		n.mu.Lock()
		defer n.mu.Unlock()
		n.reports = append(n.reports, local)
		return err
	})
}

// deletePods deletes finished stage pods in the pool.
func (n *nodePool) deletePods(pods []*corev1.Pod) {
	for _, pod := range pods {
		n.group.Go(func() error { return n.r.deletePod(n.ctx, pod) })
	}
}

// releaseCordon lifts the Skyhook's cordon of the node in the pool.
func (n *nodePool) releaseCordon(node *corev1.Node) {
	n.group.Go(func() error { return n.r.releaseCordon(n.ctx, n.sk, node) })
}

// changeTaints adds or removes the runtime-required taint in the pool.
func (n *nodePool) changeTaints(node *corev1.Node, change func(*corev1.Node, corev1.Taint) ([]byte, error)) {
	n.group.Go(func() error { return n.r.changeTaint(n.ctx, node, change) })
}

// writeRecord writes a node record in the pool.
func (n *nodePool) writeRecord(w *nodeWork, rec nodestate.Record) {
	n.group.Go(func() error { return n.r.writeRecord(n.ctx, n.sk, w, rec) })
}

// wait waits for every request, adds what the nodes reported to the pass's
// progress and puts it in a stable order (the status must not change with
// the order the nodes finished in).
func (n *nodePool) wait() error {
	err := n.group.Wait()
	for _, local := range n.reports {
		n.p.active += local.active
		n.p.complete += local.complete
		n.p.erroring = append(n.p.erroring, local.erroring...)
		n.p.stalled = append(n.p.stalled, local.stalled...)
		n.p.requeue = minPositive(n.p.requeue, local.requeue)
		n.p.blocked = append(n.p.blocked, local.blocked...)
		n.p.drainBlocked = append(n.p.drainBlocked, local.drainBlocked...)
		n.p.windowWaits += local.windowWaits
		if !local.nextWindow.IsZero() && (n.p.nextWindow.IsZero() || local.nextWindow.Before(n.p.nextWindow)) {
			n.p.nextWindow = local.nextWindow
		}
	}
	n.reports = nil
	sort.SliceStable(n.p.erroring, func(i, j int) bool { return n.p.erroring[i].Name < n.p.erroring[j].Name })
	sort.Strings(n.p.stalled)
	sort.SliceStable(n.p.blocked, func(i, j int) bool { return n.p.blocked[i].Name < n.p.blocked[j].Name })
	sort.Slice(n.p.drainBlocked, func(i, j int) bool { return n.p.drainBlocked[i].node < n.p.drainBlocked[j].node })
	return err
}
