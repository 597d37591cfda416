package reconcile

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// declared is the package as the Skyhook declares it, nil when removed.
func declared(sk *skyhookv1.Skyhook, name string) *skyhookv1.Package {
	p, ok := sk.Spec.Packages[name]
	if !ok {
		return nil
	}
	return &p
}

// recorded are the node's entries for a package, any version.
func recorded(state skyhookv1.NodeState, name string) []skyhookv1.PackageStatus {
	var out []skyhookv1.PackageStatus
	for _, e := range state {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// packageNames are the declared packages and the recorded ones (removed
// packages still to uninstall), sorted.
func packageNames(sk *skyhookv1.Skyhook, state skyhookv1.NodeState) []string {
	seen := map[string]bool{}
	for name := range sk.Spec.Packages {
		seen[name] = true
	}
	for _, e := range state {
		seen[e.Name] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// dependencyOrder lists the packages so that each comes after the packages
// it depends on (admission refuses cycles), ties by name.
func dependencyOrder(sk *skyhookv1.Skyhook, state skyhookv1.NodeState) []string {
	names := packageNames(sk, state)
	placed := map[string]bool{}
	var out []string
	var place func(string)
	place = func(n string) {
		if placed[n] {
			return
		}
		placed[n] = true
		deps := make([]string, 0, len(sk.Spec.Packages[n].DependsOn))
		for d := range sk.Spec.Packages[n].DependsOn {
			deps = append(deps, d)
		}
		sort.Strings(deps)
		for _, d := range deps {
			place(d)
		}
		out = append(out, n)
	}
	for _, n := range names {
		place(n)
	}
	return out
}

// dependenciesDone reports whether every package name depends on is done on
// the node in this pass.
func dependenciesDone(sk *skyhookv1.Skyhook, name string, done map[string]bool) bool {
	for dep := range sk.Spec.Packages[name].DependsOn {
		if !done[dep] {
			return false
		}
	}
	return true
}

// configChanged reports whether the package's configMap differs from the one
// its config stage last ran with on the node. No record (a node configured
// before hashes were kept) counts as unchanged.
func configChanged(sk *skyhookv1.Skyhook, name string, config map[string]string) bool {
	pkg, declared := sk.Spec.Packages[name]
	last, recorded := config[name]
	return declared && recorded && last != stagepod.ConfigHash(pkg.ConfigMap)
}

// rerunKey is the entry of a node's config map (next to the package's
// configMap hash) that marks a config stage rerun for a changed configMap:
// its value is the interrupt the changed keys ask for through the package's
// configInterrupts, as JSON, or empty for none. It stays until the package
// is done. Package names cannot hold '/', so it never names a package.
func rerunKey(name string) string { return name + "/rerun" }

// nextStep is lifecycle.Next for a package on a node, with whether its
// interrupt stages are due in this run: after an install or upgrade, the
// package's own interrupt; after a configMap rerun, the configInterrupts of
// the keys that changed.
func nextStep(sk *skyhookv1.Skyhook, name string, state skyhookv1.NodeState, config map[string]string) lifecycle.Step {
	d := declared(sk, name)
	interrupt := d != nil && d.Interrupt != nil
	if marker, rerun := config[rerunKey(name)]; rerun {
		interrupt = marker != ""
	}
	return lifecycle.Next(d, recorded(state, name), configChanged(sk, name, config), interrupt)
}

// interruptOf is the interrupt a package due for one asks for: the one its
// changed configMap keys asked for, or its own.
func interruptOf(sk *skyhookv1.Skyhook, name string, config map[string]string) *skyhookv1.Interrupt {
	if marker := config[rerunKey(name)]; marker != "" {
		var in skyhookv1.Interrupt
		if json.Unmarshal([]byte(marker), &in) == nil {
			return &in
		}
	}
	if d := declared(sk, name); d != nil {
		return d.Interrupt
	}
	return nil
}

// nodeStatus summarises the node's record for the status label.
func nodeStatus(sk *skyhookv1.Skyhook, state skyhookv1.NodeState, config map[string]string) skyhookv1.Status {
	complete := true
	for _, name := range packageNames(sk, state) {
		if nextStep(sk, name, state, config).Action != lifecycle.Done {
			complete = false
		}
	}
	if complete {
		return skyhookv1.StatusComplete
	}
	for _, e := range state {
		if e.State == skyhookv1.StateErroring {
			return skyhookv1.StatusErroring
		}
	}
	return skyhookv1.StatusInProgress
}

// packageList is "name:version" of every package, sorted, comma separated.
func packageList(sk *skyhookv1.Skyhook) string {
	items := make([]string, 0, len(sk.Spec.Packages))
	for name, p := range sk.Spec.Packages {
		items = append(items, name+":"+p.Version)
	}
	sort.Strings(items)
	return strings.Join(items, ",")
}

// selects reports whether the Skyhook's node selector matches the node.
func selects(sk *skyhookv1.Skyhook, node *corev1.Node) bool {
	sel, err := metav1.LabelSelectorAsSelector(&sk.Spec.NodeSelector)
	return err == nil && sel.Matches(labels.Set(node.Labels))
}

func ready(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// finishedAt is when the pod's last container ended (its creation when
// none says); a pod past its deadline that no container says ended failed
// at the deadline, so the retry backs off from there.
func finishedAt(pod *corev1.Pod) time.Time {
	t := pod.CreationTimestamp.Time
	if deadline, ok := stagepod.Deadline(pod); ok && deadline.Before(time.Now()) {
		t = deadline
	}
	for _, s := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		for _, term := range []*corev1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
			if term != nil && term.FinishedAt.After(t) {
				t = term.FinishedAt.Time
			}
		}
	}
	return t
}

// startedNodes remembers the nodes a Skyhook started until the cache shows
// them, so that a pass reading a cache that lags its own writes does not
// start more nodes than the budget allows.
type startedNodes struct {
	mu    sync.Mutex
	nodes map[types.UID]map[string]bool
}

func (s *startedNodes) add(uid types.UID, node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodes == nil {
		s.nodes = map[types.UID]map[string]bool{}
	}
	if s.nodes[uid] == nil {
		s.nodes[uid] = map[string]bool{}
	}
	s.nodes[uid][node] = true
}

func (s *startedNodes) has(uid types.UID, node string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodes[uid][node]
}

func (s *startedNodes) remove(uid types.UID, node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.nodes[uid], node)
}

func (s *startedNodes) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.nodes, uid)
}

// statusInterval is the least time between two status writes that only
// move progress counters: at fleet scale every node finishing would
// otherwise cost a write of the Skyhook.
const statusInterval = time.Second

// statusWrites remembers when each Skyhook's status was last written.
type statusWrites struct {
	mu   sync.Mutex
	last map[types.UID]time.Time
}

// hold reports whether the change from before to after can wait, and how
// long: only progress counters and messages moved, and the last write was
// less than statusInterval ago. Transitions (Ready, Stalled, the summary
// status, finalizers, observedGeneration) are written at once.
func (w *statusWrites) hold(before, after *skyhookv1.Skyhook) (time.Duration, bool) {
	if !equality.Semantic.DeepEqual(before.ObjectMeta.Finalizers, after.ObjectMeta.Finalizers) ||
		!equality.Semantic.DeepEqual(withoutCounters(before.Status), withoutCounters(after.Status)) {
		return 0, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	wait := statusInterval - time.Since(w.last[after.UID])
	if wait <= 0 {
		return 0, false
	}
	after.Status = before.Status // nothing to write now; the requeue will
	return wait, true
}

func (w *statusWrites) wrote(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = map[types.UID]time.Time{}
	}
	w.last[uid] = time.Now()
}

// withoutCounters is the status with the fields that move with every node
// blanked out.
func withoutCounters(s skyhookv1.SkyhookStatus) skyhookv1.SkyhookStatus {
	s = *s.DeepCopy()
	s.CompleteNodes, s.NodesInProgress, s.NodesNeedingAttention = "", 0, nil
	for i := range s.Compartments {
		s.Compartments[i].Nodes, s.Compartments[i].Complete, s.Compartments[i].InProgress = 0, 0, 0
	}
	for i := range s.Conditions {
		s.Conditions[i].Message, s.Conditions[i].LastTransitionTime = "", metav1.Time{}
	}
	return s
}

// minPositive is the smaller of two waits, ignoring zero.
func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// writtenRecords remembers the last node record patch written per Skyhook
// and node (by UID, so a node replaced under the same name starts afresh).
type writtenRecords struct {
	mu    sync.Mutex
	patch map[types.UID]map[string]string
}

func (w *writtenRecords) same(uid types.UID, node string, patch []byte) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.patch[uid][node] == string(patch)
}

func (w *writtenRecords) record(uid types.UID, node string, patch []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.patch == nil {
		w.patch = map[types.UID]map[string]string{}
	}
	if w.patch[uid] == nil {
		w.patch[uid] = map[string]string{}
	}
	w.patch[uid][node] = string(patch)
}

func (w *writtenRecords) forget(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.patch, uid)
}

// recentDeletes remembers the stage pods this operator deleted lately: the
// cache shows a deleted pod until its delete event arrives, and deleting it
// again would only cost a request.
type recentDeletes struct {
	mu        sync.Mutex
	at        map[types.UID]time.Time
	lastPrune time.Time
}

// recentDeleteWindow is how long a delete is remembered; far longer than
// the cache lags.
const recentDeleteWindow = 30 * time.Second

func (d *recentDeletes) has(uid types.UID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.at[uid]
	return ok && time.Since(at) < recentDeleteWindow
}

func (d *recentDeletes) add(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	if d.at == nil {
		d.at = map[types.UID]time.Time{}
	}
	d.at[uid] = now
	if now.Sub(d.lastPrune) > recentDeleteWindow {
		for k, at := range d.at {
			if now.Sub(at) >= recentDeleteWindow {
				delete(d.at, k)
			}
		}
		d.lastPrune = now
	}
}
