package reconcile

import (
	"context"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/fleet"
	"github.com/skyhook-go/skyhook/reconcile/report"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// What a pass reads from the cache: the selected nodes, their records and
// stage pods; and what it asks of a node.

// nodeWork is one selected node and what this Skyhook has on it.
type nodeWork struct {
	node *corev1.Node
	// state is the record as the cache shows it (the last one observed).
	state skyhookv1.NodeState
	// pods are the node's stage pods by package name.
	pods map[string][]*corev1.Pod
	// leaving are the node's stage pods being deleted, by package name.
	leaving map[string][]*corev1.Pod
	// config are the configMap hashes the config stages last ran with.
	config map[string]string
	// batch is the DeploymentPolicy batch the node last started in.
	batch int32
	// now is where the node stands in this pass: complete, in_progress,
	// erroring, or waiting to start.
	now skyhookv1.Status
	// written is the record the node's turn wrote in this pass, nil when
	// it had no turn (state is then current).
	written skyhookv1.NodeState
	// order is the node's place in the rollout (SKYHOOK_NODE_ORDER, see
	// orderNodes).
	order int
	// kind says how the node counts: work, or held (ignored, malformed).
	kind fleet.Kind
	// compartment is the node's compartment of the DeploymentPolicy.
	compartment string
	// report is what the node contributes to the status in this pass (and
	// keeps contributing until its next visit).
	report report.Progress
	// finishing: the pass deletes stage pods of the node whose stage is
	// recorded done (they are gone from pods, not yet leaving).
	finishing bool
	// holding: the node's work is done, its stage pods are not gone yet;
	// it keeps its budget slot (see hasPods).
	holding bool
	// stubbed: node is a stand-in (see stub); refresh reads the node.
	stubbed bool
	// problem says why a malformed node's record cannot be read.
	problem string
	// mark is why a waiting node did not start, for its status label:
	// waiting (behind another Skyhook); empty when it only waits for the
	// budget. (A node with taints the Skyhook does not tolerate is
	// blocked: now says so.)
	mark skyhookv1.Status
}

// restart readies a node known from an earlier pass for a turn in this
// one: its record is the last one it had.
func (w *nodeWork) restart() {
	w.state, w.written, w.report, w.holding = w.record(), nil, report.Progress{}, false
}

// stub replaces the node by a stand-in that keeps its name, UID and boot
// ID, for the view to keep between passes: the cached node it points to
// would stay alive beside the cache's newer copies (heartbeats replace
// every node every few minutes), doubling the memory of the fleet.
func (w *nodeWork) stub() {
	if w.stubbed {
		return
	}
	w.node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.node.Name, UID: w.node.UID},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{BootID: w.node.Status.NodeInfo.BootID}}}
	w.stubbed = true
}

// refresh reads a stubbed node again from the cache, by the name index and
// without a copy; it reports false when the node is gone (its delete event
// brings a pass that forgets it).
func (r *SkyhookReconciler) refresh(ctx context.Context, w *nodeWork) (bool, error) {
	if !w.stubbed {
		return true, nil
	}
	node, err := r.cachedNode(ctx, w.node.Name)
	if err != nil || node == nil {
		return false, err
	}
	w.node, w.stubbed = node, false
	return true, nil
}

// cachedNode reads one node from the cache by the name index and without a
// copy, like the full read (a Get copies the node, and the view would keep
// that copy of every node beside the cache's own); nil when it is gone.
func (r *SkyhookReconciler) cachedNode(ctx context.Context, name string) (*corev1.Node, error) {
	var one corev1.NodeList
	if err := r.Client.List(ctx, &one, client.MatchingFields{nodeNameField: name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	if len(one.Items) == 0 {
		return nil, nil
	}
	return &one.Items[0], nil
}

// hasPods reports whether a stage pod of the Skyhook still exists on the
// node: running, finished, or being deleted. Until none does, the node
// holds its budget slot, so that the nodes with a live stage pod (a pause
// container included) never outnumber the budget.
func (w *nodeWork) hasPods() bool {
	if w.finishing {
		return true
	}
	for _, byPackage := range []map[string][]*corev1.Pod{w.pods, w.leaving} {
		for _, pods := range byPackage {
			if len(pods) > 0 {
				return true
			}
		}
	}
	return false
}

// record is the node's record as of the end of the pass.
func (w *nodeWork) record() skyhookv1.NodeState {
	if w.written != nil {
		return w.written
	}
	return w.state
}

// gathered is what gather found among the nodes a pass visits.
type gathered struct {
	// work are the visited selected nodes the pass works on, name ordered.
	work []*nodeWork
	// held are the visited selected nodes labelled to be ignored, and those
	// whose record of the Skyhook cannot be read (malformed): these are
	// held (nothing runs there, nothing is rewritten) until an admin
	// repairs or resets the record, since starting over would run again
	// what may be complete.
	held []*nodeWork
	// gone are the visited nodes that are deleted or no longer selected.
	gone []string
}

// visitSet names the nodes a pass visits: every selected node (all), or
// names.
type visitSet struct {
	names []string
	all   bool
}

// gather reads the nodes a pass visits (visit; every selected node when
// full) with their records and stage pods, and sorts them into work,
// ignored, malformed and gone.
func (r *SkyhookReconciler) gather(ctx context.Context, sk *skyhookv1.Skyhook, visit visitSet) (gathered, error) {
	var g gathered
	sel, err := metav1.LabelSelectorAsSelector(&sk.Spec.NodeSelector)
	if err != nil {
		return g, err
	}
	nodes, byNode, leaving, err := r.readVisited(ctx, sk, sel, visit, &g)
	if err != nil {
		return g, err
	}
	records := r.memory.Records.Read(sk, nodes, visit.all, g.gone)
	for i := range nodes {
		node := &nodes[i]
		rec, err := records[i].Record, records[i].Err
		if p := records[i].Problems; len(p) > 0 && records[i].Fresh && node.Labels[skyhookv1.IgnoreNodeLabel] != "true" {
			// Once per change of the node, the node as the related
			// object: the recorder folds repeats of one (Skyhook, node)
			// into a series, and would fold every node's into the
			// first without it.
			r.Recorder.Eventf(sk, node, corev1.EventTypeWarning, "MalformedNodeRecord", "ReadNode", "node %s: %s", node.Name, strings.Join(p, "; "))
		}
		switch {
		case node.Labels[skyhookv1.IgnoreNodeLabel] == "true":
			g.held = append(g.held, &nodeWork{node: node, state: rec.State, kind: fleet.Ignored})
		case err != nil:
			g.held = append(g.held, &nodeWork{node: node, kind: fleet.Malformed, problem: err.Error()})
		default:
			g.work = append(g.work, &nodeWork{node: node, state: rec.State, pods: byNode[node.Name], leaving: leaving[node.Name],
				config: rec.Config, batch: rec.Batch})
		}
	}
	sort.Slice(g.work, func(i, j int) bool { return g.work[i].node.Name < g.work[j].node.Name })
	return g, nil
}

// readVisited reads the visited nodes that the selector selects (noting
// the others in g.gone) and their stage pods by node and package, those
// being deleted apart. The cached objects of a full read are not copied: a
// pass only reads them (writes go through fresh objects, see writeRecord),
// and copying every node on every full pass would cost as much as the
// fleet.
func (r *SkyhookReconciler) readVisited(ctx context.Context, sk *skyhookv1.Skyhook, sel labels.Selector, visit visitSet, g *gathered) (
	[]corev1.Node, map[string]map[string][]*corev1.Pod, map[string]map[string][]*corev1.Pod, error) {
	var nodes corev1.NodeList
	var pods []corev1.Pod
	if visit.all {
		if err := r.Client.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, nil, nil, err
		}
		var list corev1.PodList
		if err := r.Client.List(ctx, &list, client.InNamespace(r.Namespace), client.MatchingLabels{stagepod.SkyhookLabel: sk.Name}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, nil, nil, err
		}
		pods = list.Items
	} else {
		for _, name := range visit.names {
			node, err := r.cachedNode(ctx, name)
			if err != nil {
				return nil, nil, nil, err
			}
			if node == nil || !sel.Matches(labels.Set(node.Labels)) {
				g.gone = append(g.gone, name)
				continue
			}
			nodes.Items = append(nodes.Items, *node)
			var list corev1.PodList
			if err := r.Client.List(ctx, &list, client.InNamespace(r.Namespace), client.MatchingLabels{stagepod.SkyhookLabel: sk.Name},
				client.MatchingFields{podNodeField: name}, client.UnsafeDisableDeepCopy); err != nil {
				return nil, nil, nil, err
			}
			pods = append(pods, list.Items...)
		}
	}
	byNode, leaving := map[string]map[string][]*corev1.Pod{}, map[string]map[string][]*corev1.Pod{}
	for i := range pods {
		pod := &pods[i]
		r.memory.Created.Drop(sk.UID, pod.Name) // the cache shows it
		into := byNode
		if !pod.DeletionTimestamp.IsZero() {
			into = leaving
		}
		pkgs := into[pod.Spec.NodeName]
		if pkgs == nil {
			pkgs = map[string][]*corev1.Pod{}
			into[pod.Spec.NodeName] = pkgs
		}
		pkgs[pod.Labels[stagepod.PackageLabel]] = append(pkgs[pod.Labels[stagepod.PackageLabel]], pod)
	}
	return nodes.Items, byNode, leaving, nil
}

// taintList names the taints for a message.
func taintList(taints []corev1.Taint) string {
	parts := make([]string, len(taints))
	for i, t := range taints {
		parts[i] = t.ToString()
	}
	return strings.Join(parts, ", ")
}

// selects reports whether the Skyhook's node selector matches the node.
func selects(sk *skyhookv1.Skyhook, node *corev1.Node) bool {
	sel, err := metav1.LabelSelectorAsSelector(&sk.Spec.NodeSelector)
	return err == nil && sel.Matches(labels.Set(node.Labels))
}

// ready is the node's Ready condition (Unknown when it has none).
func ready(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}
