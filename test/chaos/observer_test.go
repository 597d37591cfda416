package chaos

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// compartmentBudget is a hard cap on the nodes of a compartment in
// progress at once.
type compartmentBudget struct {
	name     string
	selector labels.Selector
	limit    int
}

// observer watches nodes and stage pods through informers (which resume
// their watches when the apiserver ends or loses them) and records every
// broken promise as it happens:
//   - more nodes of a compartment in progress than its budget;
//   - a node cordoned by someone else uncordoned;
//   - a stage that succeeded run again (two succeeded pods for one node,
//     package, version, stage and generation), unless the first one was
//     deleted by hand before its outcome could be read.
//
// It also counts what the faults cost: stage pods created, and when the
// rollout last made progress.
type observer struct {
	skyhook     string
	budgets     []compartmentBudget
	adminCordon map[string]bool

	mu          sync.Mutex
	violations  []string
	nodes       map[string]*corev1.Node
	progress    []time.Time
	created     int
	tuples      map[string]bool
	succeeded   map[string]string
	deletedByUs map[string]bool
}

func newObserver(skyhook string, budgets []compartmentBudget, adminCordon map[string]bool) *observer {
	return &observer{skyhook: skyhook, budgets: budgets, adminCordon: adminCordon,
		nodes: map[string]*corev1.Node{}, tuples: map[string]bool{}, succeeded: map[string]string{}, deletedByUs: map[string]bool{}}
}

// start runs the informers until ctx ends and waits for their first lists.
func (o *observer) start(ctx context.Context, c *cluster.Cluster) {
	nodes := informers.NewSharedInformerFactory(c.Clientset, 0)
	nodes.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.node(obj.(*corev1.Node)) },
		UpdateFunc: func(_, obj any) { o.node(obj.(*corev1.Node)) },
	})
	pods := informers.NewSharedInformerFactoryWithOptions(c.Clientset, 0, informers.WithNamespace(operatorNamespace))
	pods.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.pod(obj.(*corev1.Pod), true) },
		UpdateFunc: func(_, obj any) { o.pod(obj.(*corev1.Pod), false) },
	})
	nodes.Start(ctx.Done())
	pods.Start(ctx.Done())
	nodes.WaitForCacheSync(ctx.Done())
	pods.WaitForCacheSync(ctx.Done())
}

func (o *observer) violate(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, v := range o.violations {
		if v == msg {
			return
		}
	}
	o.violations = append(o.violations, msg)
}

func (o *observer) node(n *corev1.Node) {
	o.mu.Lock()
	defer o.mu.Unlock()
	stateKey := skyhookv1.NodeStateAnnotation(o.skyhook)
	if old, ok := o.nodes[n.Name]; !ok || old.Annotations[stateKey] != n.Annotations[stateKey] {
		o.progress = append(o.progress, time.Now())
	}
	o.nodes[n.Name] = n
	if o.adminCordon[n.Name] && !n.Spec.Unschedulable {
		o.violate("node %s, cordoned by an admin, was uncordoned", n.Name)
	}
	statusKey := skyhookv1.StatusKey(o.skyhook)
	for _, b := range o.budgets {
		busy := 0
		for _, other := range o.nodes {
			s := other.Labels[statusKey]
			if b.selector.Matches(labels.Set(other.Labels)) && (s == string(skyhookv1.StatusInProgress) || s == string(skyhookv1.StatusErroring)) {
				busy++
			}
		}
		if busy > b.limit {
			o.violate("compartment %s had %d nodes in progress, over its budget of %d", b.name, busy, b.limit)
		}
	}
}

// stageKey names what a stage pod runs: node, package, version, stage and
// the Skyhook's generation.
func stageKey(p *corev1.Pod) string {
	return fmt.Sprintf("%s/%s@%s/%s/gen%s", p.Spec.NodeName, stagepod.PackageOf(p),
		p.Annotations[stagepod.VersionAnnotation], p.Labels[stagepod.StageLabel], p.Annotations[stagepod.GenerationAnnotation])
}

func (o *observer) pod(p *corev1.Pod, added bool) {
	if p.Labels[stagepod.SkyhookLabel] != o.skyhook {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, view := range stagepod.Views(p) { // a pod of several packages: each in turn
		o.packageOf(view, added)
	}
}

// packageOf notes what the pod (as one package reads it) ran.
func (o *observer) packageOf(p *corev1.Pod, added bool) {
	key := stageKey(p)
	if added {
		o.created++ // a package's part of a pod counts as a pod of its own
		o.tuples[key] = true
	}
	if !stageSucceeded(p) {
		return
	}
	if first, ok := o.succeeded[key]; ok && first != p.Name && !o.deletedByUs[first] {
		o.violate("stage %s ran again after it succeeded (%s, then %s)", key, first, p.Name)
	} else if !ok {
		o.succeeded[key] = p.Name
	}
}

// stageSucceeded: every init container (copy, the stage, its check) ended
// with 0.
func stageSucceeded(p *corev1.Pod) bool {
	if len(p.Status.InitContainerStatuses) == 0 || len(p.Status.InitContainerStatuses) < len(p.Spec.InitContainers) {
		return false
	}
	for _, s := range p.Status.InitContainerStatuses {
		if s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 {
			return false
		}
	}
	return true
}

// deleted notes a pod the test deleted by hand.
func (o *observer) deleted(name string) {
	o.mu.Lock()
	o.deletedByUs[name] = true
	o.mu.Unlock()
}

// progressAfter is the first progress after t, if any.
func (o *observer) progressAfter(t time.Time) (time.Duration, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	i := sort.Search(len(o.progress), func(i int) bool { return o.progress[i].After(t) })
	if i == len(o.progress) {
		return 0, false
	}
	return o.progress[i].Sub(t), true
}

// extraPods is how many more stage pods were made than distinct stages (a
// pod of several packages counts once for each).
func (o *observer) extraPods() (created, extra int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.created, o.created - len(o.tuples)
}

func (o *observer) Violations() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.violations...)
}
