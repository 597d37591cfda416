package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/skyhook-go/skyhook/api/timewindow"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/budget"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/nodestate"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// nodeWork is one selected node and what this Skyhook has on it.
type nodeWork struct {
	node *corev1.Node
	// state is the record as the cache shows it (the last one observed).
	state skyhookv1.NodeState
	// pods are the node's stage pods by package name.
	pods map[string][]*corev1.Pod
	// config are the configMap hashes the config stages last ran with.
	config map[string]string
	// batch is the DeploymentPolicy batch the node last started in.
	batch int32
	// now is where the node stands in this pass: complete, in_progress,
	// erroring, or waiting to start.
	now skyhookv1.Status
	// interrupt is the merged interrupt due on the node in this pass.
	interrupt *skyhookv1.Interrupt
}

// progress summarises a pass over the nodes.
type progress struct {
	selected, complete, active int
	ignored                    int // selected but labelled to be ignored
	blocked                    []skyhookv1.NodeAttention
	erroring                   []skyhookv1.NodeAttention
	stalled                    []string
	// snapshots are the Skyhook's package snapshots by snapshot.Key.
	snapshots map[string]*corev1.ConfigMap
	// drainBlocked are the nodes whose interrupt waits on pods.
	drainBlocked []drainReport
	// window is the policy's interrupt window (nil for none); windowWaits
	// counts the nodes waiting for it to open at nextWindow.
	window      *timewindow.Window
	windowWaits int
	nextWindow  time.Time
	halted      bool // a compartment halted and nothing runs
	// behind counts, per Skyhook that goes first, the nodes that wait for
	// it to finish there (priority).
	behind  map[string]int
	requeue time.Duration
}

// rollout does one pass: reads the selected nodes and the stage pods,
// advances every node already in progress, starts waiting nodes while the
// budget allows, and writes the status.
func (r *SkyhookReconciler) rollout(ctx context.Context, sk *skyhookv1.Skyhook) (ctrl.Result, error) {
	work, blocked, recorded, err := r.gather(ctx, sk)
	if err != nil {
		return ctrl.Result{}, err
	}
	snapshots, err := r.snapshots(ctx, sk)
	if err != nil {
		return ctrl.Result{}, err
	}
	paused := sk.Annotations[skyhookv1.PauseAnnotation] == "true"
	policy, err := r.deploymentPolicy(ctx, sk)
	if err != nil {
		return ctrl.Result{}, err
	}
	window := interruptWindow(policy)
	p := progress{selected: len(work), blocked: blocked, ignored: len(blocked), snapshots: snapshots, window: window}
	var waiting []*nodeWork
	pool := r.pool(ctx, sk, &p)
	for _, w := range work {
		pool.deletePods(r.finishedPods(sk, w))
		if r.skipNotReady(sk, w, pool, &p) || r.skippedDrain(sk, w, &p) {
			continue
		}
		switch {
		case nodeComplete(sk, w):
			p.complete++
			w.now = skyhookv1.StatusComplete
			if cordon.OwnedBy(w.node, sk) {
				pool.releaseCordon(w.node) // left by a crash between the last stage and the release
			}
		case r.nodeActive(sk, w):
			p.active++
			pool.advance(w, !paused)
		default:
			w.now = skyhookv1.StatusWaiting
			waiting = append(waiting, w)
		}
	}
	if err := pool.wait(); err != nil {
		return ctrl.Result{}, err
	}
	capacity := budget.Cap(sk.Spec.InterruptionBudget, len(work))
	gate := r.policyGate(sk, work, policy)
	ahead, err := r.skyhooksAhead(ctx, sk)
	if err != nil {
		return ctrl.Result{}, err
	}
	pool = r.pool(ctx, sk, &p)
	var starting []*nodeWork
	for _, w := range waiting {
		if taints := stagepod.Untolerated(sk, w.node, r.RuntimeRequiredTaint); len(taints) > 0 {
			p.blocked = append(p.blocked, skyhookv1.NodeAttention{Name: w.node.Name, Status: skyhookv1.StatusBlocked,
				Message: fmt.Sprintf("taints not tolerated: %s (add them to additionalTolerations to run here)", taintList(taints))})
			continue
		}
		if paused || (gate == nil && p.active >= capacity) {
			continue // waits for a slot; later nodes are still checked for taints
		}
		if first := waitingFor(ahead, w.node); first != "" {
			p.waitBehind(first) // a Skyhook of lower priority number is not done here yet
			continue
		}
		if gate != nil && !gate.allows(w) {
			continue // its compartment's batch is full, still running or halted
		}
		p.active++
		r.started.add(sk.UID, w.node.Name)
		w.now = skyhookv1.StatusInProgress
		starting = append(starting, w)
	}
	markWaiting(sk, waiting, pool)
	if err := r.runtimeTaints(ctx, sk, work, pool); err != nil {
		return ctrl.Result{}, err
	}
	for _, w := range starting {
		pool.advance(w, true)
	}
	if err := pool.wait(); err != nil {
		return ctrl.Result{}, err
	}
	p.halted = r.finishPolicy(sk, gate, p.complete == p.selected)
	if err := r.pruneSnapshots(ctx, sk, snapshots, recorded); err != nil {
		return ctrl.Result{}, err
	}
	r.summarise(sk, p, paused)
	observe(sk, work, p, capacity)
	return ctrl.Result{RequeueAfter: p.requeue}, nil
}

// skyhookAhead is another Skyhook that matters on the nodes it selects,
// with its node selector parsed once per pass rather than once per node.
type skyhookAhead struct {
	name     string
	selector labels.Selector
}

// otherSkyhooks lists the Skyhooks that count for keep (see selectorsOf).
func (r *SkyhookReconciler) otherSkyhooks(ctx context.Context, keep func(*skyhookv1.Skyhook) bool) ([]skyhookAhead, error) {
	var list skyhookv1.SkyhookList // read only: no copy of every Skyhook per pass
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return selectorsOf(list.Items, keep), nil
}

// selectorsOf are the Skyhooks that count for keep, skipping disabled and
// deleted ones, with their selectors parsed.
func selectorsOf(skyhooks []skyhookv1.Skyhook, keep func(*skyhookv1.Skyhook) bool) []skyhookAhead {
	var out []skyhookAhead
	for i := range skyhooks {
		other := &skyhooks[i]
		if !other.DeletionTimestamp.IsZero() || other.Annotations[skyhookv1.DisableAnnotation] == "true" || !keep(other) {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&other.Spec.NodeSelector)
		if err != nil {
			continue // admission refuses such selectors; it selects nothing
		}
		out = append(out, skyhookAhead{name: other.Name, selector: sel})
	}
	return out
}

// goesBefore reports whether other goes before sk on a node they share:
// a lower priority number, or the same and a name before sk's. Paused
// Skyhooks hold the ones after them (selectorsOf skips only disabled ones).
func goesBefore(other, sk *skyhookv1.Skyhook) bool {
	return other.Name != sk.Name &&
		(other.Spec.Priority < sk.Spec.Priority || (other.Spec.Priority == sk.Spec.Priority && other.Name < sk.Name))
}

// skyhooksAhead are the Skyhooks that go before sk on a node they share.
func (r *SkyhookReconciler) skyhooksAhead(ctx context.Context, sk *skyhookv1.Skyhook) ([]skyhookAhead, error) {
	return r.otherSkyhooks(ctx, func(other *skyhookv1.Skyhook) bool { return goesBefore(other, sk) })
}

// waitingFor names the first Skyhook ahead that selects the node and is not
// complete on it, or is empty.
func waitingFor(ahead []skyhookAhead, node *corev1.Node) string {
	for _, other := range ahead {
		if other.selector.Matches(labels.Set(node.Labels)) && node.Labels[skyhookv1.StatusKey(other.name)] != string(skyhookv1.StatusComplete) {
			return other.name
		}
	}
	return ""
}

// gather lists the selected nodes, name ordered, with their records and
// stage pods; the selected nodes left out because they are ignored; and the
// package versions (NodeStateKeys) any selected node records.
func (r *SkyhookReconciler) gather(ctx context.Context, sk *skyhookv1.Skyhook) ([]*nodeWork, []skyhookv1.NodeAttention, map[string]bool, error) {
	sel, err := metav1.LabelSelectorAsSelector(&sk.Spec.NodeSelector)
	if err != nil {
		return nil, nil, nil, err
	}
	// The cached objects are read without a copy: a pass only reads them
	// (writes go through fresh objects, see writeRecord), and copying every
	// node on every pass would make each pass cost as much as the fleet.
	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, nil, err
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(r.Namespace), client.MatchingLabels{stagepod.SkyhookLabel: sk.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, nil, err
	}
	byNode := map[string]map[string][]*corev1.Pod{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !pod.DeletionTimestamp.IsZero() {
			continue
		}
		pkgs := byNode[pod.Spec.NodeName]
		if pkgs == nil {
			pkgs = map[string][]*corev1.Pod{}
			byNode[pod.Spec.NodeName] = pkgs
		}
		pkgs[pod.Labels[stagepod.PackageLabel]] = append(pkgs[pod.Labels[stagepod.PackageLabel]], pod)
	}
	var work []*nodeWork
	var ignored []skyhookv1.NodeAttention
	recorded := map[string]bool{}
	records := r.records.read(sk, nodes.Items)
	for i := range nodes.Items {
		node := &nodes.Items[i]
		rec := records[i].record
		state := rec.State
		if records[i].err != nil {
			log.FromContext(ctx).Error(records[i].err, "starting the node's record over")
			state = skyhookv1.NodeState{}
		}
		for key := range state {
			recorded[key] = true
		}
		if node.Labels[skyhookv1.IgnoreNodeLabel] == "true" {
			ignored = append(ignored, skyhookv1.NodeAttention{Name: node.Name, Status: skyhookv1.StatusBlocked,
				Message: "ignored: labelled " + skyhookv1.IgnoreNodeLabel + "=true"})
			continue
		}
		work = append(work, &nodeWork{node: node, state: state, pods: byNode[node.Name], config: rec.Config, batch: rec.Batch})
	}
	sort.Slice(work, func(i, j int) bool { return work[i].node.Name < work[j].node.Name })
	return work, ignored, recorded, nil
}

func taintList(taints []corev1.Taint) string {
	parts := make([]string, len(taints))
	for i, t := range taints {
		parts[i] = t.ToString()
	}
	return strings.Join(parts, ", ")
}

// markWaitingPerPass bounds the waiting marks one pass writes, so that a new
// generation over thousands of nodes does not hold up the pass that starts
// them; each mark is a node event that brings the next pass.
const markWaitingPerPass = 50

// markWaiting turns the status of nodes that completed an earlier
// generation and wait for this one from complete to waiting: admins, and
// Skyhooks of a later priority, read it.
func markWaiting(sk *skyhookv1.Skyhook, waiting []*nodeWork, pool *nodePool) {
	marked := 0
	for _, w := range waiting {
		if w.now != skyhookv1.StatusWaiting || w.node.Labels[skyhookv1.StatusKey(sk.Name)] != string(skyhookv1.StatusComplete) {
			continue
		}
		if marked == markWaitingPerPass {
			return
		}
		pool.writeRecord(w, nodestate.Record{State: w.state, Config: w.config, Status: skyhookv1.StatusWaiting, Batch: w.batch})
		marked++
	}
}

// nodeComplete reports whether every package is done on the node.
func nodeComplete(sk *skyhookv1.Skyhook, w *nodeWork) bool {
	for _, name := range packageNames(sk, w.state) {
		if step := nextStep(sk, name, w.state, w.config); step.Action != lifecycle.Done {
			return false
		}
	}
	return true
}

// nodeActive reports whether work on the node has begun and not finished:
// it counts against the budget.
func (r *SkyhookReconciler) nodeActive(sk *skyhookv1.Skyhook, w *nodeWork) bool {
	if r.started.has(sk.UID, w.node.Name) {
		return true
	}
	for _, pods := range w.pods {
		if len(pods) > 0 {
			return true
		}
	}
	if w.node.Labels[skyhookv1.StatusKey(sk.Name)] == string(skyhookv1.StatusBlocked) {
		// Skipped while NotReady (skipNotReady): back, it waits for a
		// budget slot to resume its stage.
		return false
	}
	for _, e := range w.state {
		if e.State == skyhookv1.StateInProgress || e.State == skyhookv1.StateErroring {
			return true
		}
	}
	// A node that finished an earlier generation and has more to do now is
	// waiting, not active, until the budget lets it start.
	return false
}

// advance moves every package of the node as far as it can go now, in
// dependency order, and records the result on the node in one write.
// start=false only follows running stages (a paused Skyhook).
func (r *SkyhookReconciler) advance(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, start bool, p *progress) error {
	state, config := maps.Clone(w.state), maps.Clone(w.config)
	due, err := r.advancePackages(ctx, sk, w, state, config, start, p)
	if err != nil {
		return err
	}
	rec := interrupt.Read(w.node, sk.Name)
	switch {
	case len(due) == 0:
		rec = nil
	case othersRunning(state, due) || (!start && rec == nil):
		// The interrupt waits for the node's other stages (one interrupt
		// for all), and a paused Skyhook starts none.
	default:
		done, next, err := r.interruptNode(ctx, sk, w, state, config, due, rec, p)
		if err != nil {
			return err
		}
		rec = next
		if done { // the post-interrupt stages start in this same pass
			if _, err := r.advancePackages(ctx, sk, w, state, config, start, p); err != nil {
				return err
			}
		}
	}
	status := nodeStatus(sk, state, config)
	if rec != nil && rec.Phase == interrupt.PhaseSkipped {
		status = skyhookv1.StatusBlocked // given up for this generation (drain.onTimeout: Skip)
	}
	w.now = status
	if status == skyhookv1.StatusComplete {
		p.active--
		p.complete++
		r.started.remove(sk.UID, w.node.Name)
	}
	if rec == nil || rec.Phase == interrupt.PhaseSkipped {
		// Not interrupting (any more): a cordon of this Skyhook's goes,
		// also one a crash left behind.
		if err := r.releaseCordon(ctx, sk, w.node); err != nil {
			return err
		}
	}
	encoded, err := interrupt.Encode(rec)
	if err != nil {
		return err
	}
	return r.writeRecord(ctx, sk, w, nodestate.Record{State: state, Config: config, Status: status, Batch: w.batch, Interrupt: encoded})
}

// advancePackages advances every package of the node whose dependencies
// are done, in dependency order, and returns the packages whose next stage
// is the interrupt.
func (r *SkyhookReconciler) advancePackages(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, state skyhookv1.NodeState, config map[string]string, start bool, p *progress) ([]string, error) {
	done := map[string]bool{}
	var due []string
	for _, name := range dependencyOrder(sk, state) {
		if !dependenciesDone(sk, name, done) {
			continue
		}
		finished, err := r.advancePackage(ctx, sk, w, state, config, name, start, p)
		if err != nil {
			return nil, err
		}
		done[name] = finished
		if !finished && interruptDue(sk, state, config, name) {
			due = append(due, name)
		}
	}
	return due, nil
}

// writeRecord writes the Skyhook's record on the node when it differs from
// what the node, and this operator's last write, say.
func (r *SkyhookReconciler) writeRecord(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, rec nodestate.Record) error {
	patchData, err := nodestate.Patch(w.node, sk.Name, rec)
	if err != nil || patchData == nil {
		return err
	}
	// The cached node may not show the last write yet; writing the same
	// record again would only cost a request.
	if r.written.same(sk.UID, string(w.node.UID), patchData) {
		return nil
	}
	// A fresh object: Patch decodes the answer into it, and w.node is the
	// cache's own copy.
	target := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.node.Name}}
	if err := r.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, patchData)); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.written.record(sk.UID, string(w.node.UID), patchData)
	return nil
}

// advancePackage runs the package's lifecycle on the node as far as it goes
// now: records finished stages and starts the next one. It reports whether
// the package is done.
func (r *SkyhookReconciler) advancePackage(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, state skyhookv1.NodeState, config map[string]string, name string, start bool, p *progress) (bool, error) {
	for range 8 { // a package has at most 5 stages; each turn settles one
		step := nextStep(sk, name, state, config)
		key := skyhookv1.NodeStateKey(name, step.Version)
		switch step.Action {
		case lifecycle.Done:
			delete(config, rerunKey(name)) // the rerun, and its interrupt, are over
			return true, nil
		case lifecycle.Forget:
			delete(state, key)
			if declared(sk, name) == nil {
				delete(config, name)
			}
			continue
		}
		if step.Stage == skyhookv1.StageInterrupt {
			return false, nil // the node's interrupt path runs it, merged (interruptNode)
		}
		pod := stagePodFor(sk, name, w.pods[name], step)
		entry := state[key]
		if rerun := step.Stage == skyhookv1.StageConfig && entry.State == skyhookv1.StateComplete &&
			lifecycle.Order(entry.Stage) >= lifecycle.Order(skyhookv1.StageConfig); rerun && pod == nil && start {
			// A rerun for a changed configMap: its interrupt is what the
			// changed keys ask for, decided now while the last hash is known.
			config[rerunKey(name)] = configInterruptMarker(sk, name, config[name], stagepod.ConfigHash(sk.Spec.Packages[name].ConfigMap))
		}
		entry.Name, entry.Version, entry.Image, entry.Stage = name, step.Version, step.Image, step.Stage
		if step.Stage == skyhookv1.StageUpgrade || step.Stage == skyhookv1.StageApply {
			delete(config, rerunKey(name)) // a new install runs the package's own interrupt
		}
		if step.Stage == skyhookv1.StageUpgrade {
			for k, e := range state {
				if e.Name == name && k != key {
					delete(state, k) // the upgrade replaces the old version's record
				}
			}
		}
		if pod == nil {
			if !start {
				return false, nil
			}
			if entry.State != skyhookv1.StateInProgress && entry.State != skyhookv1.StateErroring {
				entry.Restarts = 0
			}
			if step.Stage == skyhookv1.StageConfig && entry.State == skyhookv1.StateComplete {
				// A rerun for a changed configMap: the pod of the earlier run
				// was cleaned up; this one is a new attempt.
				entry.Restarts = 0
			}
			entry.State = skyhookv1.StateInProgress
			state[key] = entry
			return false, r.createStagePod(ctx, sk, w, name, step, entry.Restarts, p)
		}
		outcome := r.outcome(pod, p)
		switch outcome.Result {
		case stagepod.Running:
			entry.State = skyhookv1.StateInProgress
			state[key] = entry
			return false, nil
		case stagepod.Succeeded:
			// The pod stays until the cache shows the stage recorded
			// (cleanUp), so a pass that reads an older record cannot run
			// the stage again.
			entry.State = skyhookv1.StateComplete
			state[key] = entry
			if step.Stage == skyhookv1.StageConfig {
				config[name] = pod.Annotations[stagepod.ConfigHashAnnotation]
			}
			continue
		}
		entry.State = skyhookv1.StateErroring
		state[key] = entry
		p.erroring = append(p.erroring, skyhookv1.NodeAttention{Name: w.node.Name, Status: skyhookv1.StatusErroring,
			Message: fmt.Sprintf("package %s %s, stage %s: %s (logs: %s)", name, step.Version, step.Stage, outcome.Message, logsHint(pod, outcome.Container))})
		return false, r.retry(ctx, sk, w, pod, name, step, &entry, state, key, start, p)
	}
	return false, nil
}

// retry starts the next try of a failed stage after its backoff, at once for
// a new generation of the Skyhook (the spec may fix it), or gives up after
// MaxAttempts, keeping the failed pod so its logs stay readable.
func (r *SkyhookReconciler) retry(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, pod *corev1.Pod, name string, step lifecycle.Step, entry *skyhookv1.PackageStatus, state skyhookv1.NodeState, key string, start bool, p *progress) error {
	newGeneration := pod.Annotations[stagepod.GenerationAnnotation] != strconv.FormatInt(sk.Generation, 10)
	if !start {
		return nil
	}
	if !newGeneration {
		if entry.Restarts+1 >= r.MaxAttempts {
			p.stalled = append(p.stalled, fmt.Sprintf("%s on %s", name, w.node.Name))
			return nil
		}
		wait := backoff(entry.Restarts) - time.Since(finishedAt(pod))
		if wait > 0 {
			if p.requeue == 0 || wait < p.requeue {
				p.requeue = wait
			}
			return nil
		}
	}
	if err := r.deletePod(ctx, pod); err != nil {
		return err
	}
	if newGeneration {
		entry.Restarts = 0
	} else {
		entry.Restarts++
	}
	state[key] = *entry
	return r.createStagePod(ctx, sk, w, name, step, entry.Restarts, p)
}

// stagePodFor is the newest try of the step's stage among a package's pods;
// for the config stage, one that mounts the declared configMap.
func stagePodFor(sk *skyhookv1.Skyhook, name string, pods []*corev1.Pod, step lifecycle.Step) *corev1.Pod {
	var found *corev1.Pod
	for _, pod := range pods {
		if pod.Annotations[stagepod.VersionAnnotation] != step.Version || pod.Labels[stagepod.StageLabel] != string(step.Stage) {
			continue
		}
		if step.Stage == skyhookv1.StageConfig && pod.Annotations[stagepod.ConfigHashAnnotation] != stagepod.ConfigHash(sk.Spec.Packages[name].ConfigMap) {
			continue
		}
		if found == nil || attempt(pod) > attempt(found) {
			found = pod
		}
	}
	return found
}

func attempt(pod *corev1.Pod) int {
	n, _ := strconv.Atoi(pod.Annotations[stagepod.AttemptAnnotation])
	return n
}

// finishedPods takes out of w.pods, and returns, the node's stage pods that
// are behind the cached record: their stage is recorded complete or a later
// stage is, or their version was forgotten (an uninstall) and is not the
// declared one. They are to be deleted.
func (r *SkyhookReconciler) finishedPods(sk *skyhookv1.Skyhook, w *nodeWork) []*corev1.Pod {
	var finishedPods []*corev1.Pod
	for name, pods := range w.pods {
		kept := pods[:0]
		for _, pod := range pods {
			version := pod.Annotations[stagepod.VersionAnnotation]
			entry, ok := w.state[skyhookv1.NodeStateKey(name, version)]
			// The cache can lag this operator's writes, so a pod ahead of the
			// record (started after it was written) is not finished.
			podStage := skyhookv1.Stage(pod.Labels[stagepod.StageLabel])
			finished := ok && (lifecycle.Order(entry.Stage) > lifecycle.Order(podStage) ||
				(entry.Stage == podStage && entry.State == skyhookv1.StateComplete))
			if podStage == skyhookv1.StageConfig {
				switch hash := pod.Annotations[stagepod.ConfigHashAnnotation]; {
				case hash == w.config[name]:
				case hash == stagepod.ConfigHash(sk.Spec.Packages[name].ConfigMap):
					finished = false // a rerun for a changed configMap, not recorded yet
				default: // ran with a configMap that changed again since
					finished = stagepod.Read(pod).Result != stagepod.Running
				}
			}
			if !ok && version != sk.Spec.Packages[name].Version {
				finished = stagepod.Read(pod).Result != stagepod.Running
			}
			if !finished {
				kept = append(kept, pod)
				continue
			}
			finishedPods = append(finishedPods, pod)
		}
		w.pods[name] = kept
	}
	return finishedPods
}

func (r *SkyhookReconciler) createStagePod(ctx context.Context, sk *skyhookv1.Skyhook, w *nodeWork, name string, step lifecycle.Step, attempt int32, p *progress) error {
	def, configMap := definition(sk, name, step, p.snapshots)
	spec := stagepod.Spec{
		Skyhook: sk, Package: name, Definition: def, Version: step.Version, Image: step.Image, Stage: step.Stage, Node: w.node.Name,
		Namespace: r.Namespace, AgentImage: r.AgentImage, PauseImage: r.PauseImage, Attempt: attempt, ConfigMap: configMap,
		RuntimeRequiredTaint: r.RuntimeRequiredTaint, Timeout: r.StageTimeout,
		NodeLabels: w.node.Labels, NodeAnnotations: w.node.Annotations,
	}
	if step.Stage == skyhookv1.StageInterrupt {
		spec.Interrupt = w.interrupt
	}
	pod := stagepod.Build(spec)
	if err := r.Client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating stage pod %s: %w", pod.Name, err)
	}
	return nil
}

// logsHint is the kubectl command that shows the failed container's logs
// (the pod's, when no one container failed).
func logsHint(pod *corev1.Pod, container string) string {
	if container == "" {
		return fmt.Sprintf("kubectl logs -n %s %s --all-containers", pod.Namespace, pod.Name)
	}
	return fmt.Sprintf("kubectl logs -n %s %s -c %s", pod.Namespace, pod.Name, container)
}

// outcome reads how a stage pod stands. A pod still running a tenth of its
// timeout (at most a minute) past its deadline counts as failed: its
// kubelet did not stop it, and the stage must not wait forever. Until then
// the pass comes back at that moment.
func (r *SkyhookReconciler) outcome(pod *corev1.Pod, p *progress) stagepod.Outcome {
	outcome := stagepod.Read(pod)
	if outcome.Result != stagepod.Running {
		return outcome
	}
	grace := min(r.StageTimeout/10, time.Minute)
	if late, left := stagepod.TimedOut(pod, grace, time.Now()); late {
		return stagepod.Outcome{Result: stagepod.Failed, Message: fmt.Sprintf("did not finish within the stage timeout (%s)", r.StageTimeout)}
	} else if left > 0 {
		p.requeue = minPositive(p.requeue, left)
	}
	return outcome
}

func (r *SkyhookReconciler) deletePod(ctx context.Context, pod *corev1.Pod) error {
	if r.deleted.has(pod.UID) {
		return nil
	}
	if err := r.Client.Delete(ctx, pod, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return err
	}
	r.deleted.add(pod.UID)
	return nil
}

// firstPerNode keeps the first entry of each node: the list is a map keyed
// by node name, and a node with two failing packages must not appear twice.
func firstPerNode(list []skyhookv1.NodeAttention) []skyhookv1.NodeAttention {
	seen := map[string]bool{}
	out := list[:0]
	for _, a := range list {
		if !seen[a.Name] {
			seen[a.Name] = true
			out = append(out, a)
		}
	}
	return out
}

// summarise writes the status and the Flux conditions.
func (r *SkyhookReconciler) summarise(sk *skyhookv1.Skyhook, p progress, paused bool) {
	s := &sk.Status
	s.CompleteNodes = fmt.Sprintf("%d/%d", p.complete, p.selected)
	s.NodesInProgress = p.active
	s.PackageList = packageList(sk)
	s.NodesNeedingAttention = append(append([]skyhookv1.NodeAttention{}, p.erroring...), p.blocked...)
	if len(p.blocked) > 0 {
		names := make([]string, 0, min(len(p.blocked), 10))
		for _, b := range p.blocked[:min(len(p.blocked), 10)] {
			names = append(names, b.Name+" ("+b.Message+")")
		}
		more := ""
		if len(p.blocked) > 10 {
			more = fmt.Sprintf(" and %d more", len(p.blocked)-10)
		}
		conditions.MarkTrue(sk, skyhookv1.NodesBlockedCondition, "NodesBlocked", "%d nodes blocked: %s%s", len(p.blocked), strings.Join(names, "; "), more)
	} else {
		conditions.Delete(sk, skyhookv1.NodesBlockedCondition)
	}
	r.reportDrains(sk, p.drainBlocked)
	reportWindow(sk, p.windowWaits, p.nextWindow)
	s.NodesNeedingAttention = firstPerNode(s.NodesNeedingAttention)
	if len(s.NodesNeedingAttention) > skyhookv1.MaxAttentionNodes {
		s.NodesNeedingAttention = s.NodesNeedingAttention[:skyhookv1.MaxAttentionNodes]
	}
	switch {
	case p.complete == p.selected:
		s.Status = skyhookv1.StatusComplete
		s.ObservedGeneration = sk.Generation
		conditions.Delete(sk, meta.ReconcilingCondition)
		conditions.Delete(sk, meta.StalledCondition)
		conditions.MarkTrue(sk, meta.ReadyCondition, meta.SucceededReason, "Applied to %d/%d nodes", p.complete, p.selected)
		return
	case p.halted:
		// Nothing runs any more and the policy stopped new starts.
		s.Status = skyhookv1.StatusErroring
		s.ObservedGeneration = sk.Generation
		conditions.Delete(sk, meta.ReconcilingCondition)
		conditions.MarkStalled(sk, "RolloutHalted", "%s", conditions.GetMessage(sk, skyhookv1.RolloutHaltedCondition))
		conditions.MarkFalse(sk, meta.ReadyCondition, "RolloutHalted", "%s", conditions.GetMessage(sk, skyhookv1.RolloutHaltedCondition))
		return
	case len(p.stalled) > 0:
		s.Status = skyhookv1.StatusErroring
		s.ObservedGeneration = sk.Generation
		conditions.Delete(sk, meta.ReconcilingCondition)
		conditions.MarkStalled(sk, "StageFailed", "gave up after %d attempts: %v", r.MaxAttempts, p.stalled)
		conditions.MarkFalse(sk, meta.ReadyCondition, "StageFailed", "gave up after %d attempts: %v", r.MaxAttempts, p.stalled)
		return
	case paused:
		s.Status = skyhookv1.StatusPaused
	case len(p.erroring) > 0:
		s.Status = skyhookv1.StatusErroring
	default:
		s.Status = skyhookv1.StatusInProgress
	}
	conditions.Delete(sk, meta.StalledCondition)
	msg := fmt.Sprintf("%d/%d nodes complete, %d in progress%s", p.complete, p.selected, p.active, p.behindSummary())
	conditions.MarkReconciling(sk, meta.ProgressingReason, "%s", msg)
	conditions.MarkFalse(sk, meta.ReadyCondition, meta.ProgressingReason, "%s", msg)
}

func (p *progress) waitBehind(first string) {
	if p.behind == nil {
		p.behind = map[string]int{}
	}
	p.behind[first]++
}

// behindSummary says which Skyhooks hold nodes back, so a rollout that
// does not move because another Skyhook is erroring says why.
func (p *progress) behindSummary() string {
	if len(p.behind) == 0 {
		return ""
	}
	var n int
	var names []string
	for _, name := range slices.Sorted(maps.Keys(p.behind)) {
		n += p.behind[name]
		names = append(names, fmt.Sprintf("%s (%d)", name, p.behind[name]))
	}
	return fmt.Sprintf(", %d waiting for Skyhooks that go first there: %s", n, strings.Join(names, ", "))
}
