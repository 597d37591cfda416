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
	// mark is why a waiting node did not start, for its status label:
	// waiting (behind another Skyhook); empty when it only waits for the
	// budget. (A node with taints the Skyhook does not tolerate is
	// blocked: now says so.)
	mark skyhookv1.Status
}

// record is the node's record as of the end of the pass.
func (w *nodeWork) record() skyhookv1.NodeState {
	if w.written != nil {
		return w.written
	}
	return w.state
}

// countStatus counts the nodes that stand at status in this pass.
func countStatus(work []*nodeWork, status skyhookv1.Status) int {
	n := 0
	for _, w := range work {
		if w.now == status {
			n++
		}
	}
	return n
}

// gathered is what gather found.
type gathered struct {
	// work are the selected nodes the pass works on, name ordered.
	work []*nodeWork
	// ignored are the selected nodes labelled to be ignored.
	ignored []skyhookv1.NodeAttention
	// malformed are the selected nodes whose record of the Skyhook cannot
	// be read: they are held (nothing runs there, nothing is rewritten)
	// until an admin repairs or resets the record, since starting over
	// would run again what may be complete.
	malformed []skyhookv1.NodeAttention
	// recorded are the package versions (NodeStateKeys) any selected node
	// records; nil when a record could not be read (then every version
	// may still be on a node).
	recorded map[string]bool
}

// gather lists the selected nodes with their records and stage pods, and
// the nodes it leaves out (see gathered).
func (r *SkyhookReconciler) gather(ctx context.Context, sk *skyhookv1.Skyhook) (gathered, error) {
	var g gathered
	sel, err := metav1.LabelSelectorAsSelector(&sk.Spec.NodeSelector)
	if err != nil {
		return g, err
	}
	// The cached objects are read without a copy: a pass only reads them
	// (writes go through fresh objects, see writeRecord), and copying every
	// node on every pass would make each pass cost as much as the fleet.
	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
		return g, err
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(r.Namespace), client.MatchingLabels{stagepod.SkyhookLabel: sk.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return g, err
	}
	byNode, leaving := map[string]map[string][]*corev1.Pod{}, map[string]map[string][]*corev1.Pod{}
	for i := range pods.Items {
		pod := &pods.Items[i]
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
	g.recorded = map[string]bool{}
	records := r.records.read(sk, nodes.Items)
	for i := range nodes.Items {
		node := &nodes.Items[i]
		rec, err := records[i].record, records[i].err
		if p := records[i].problems; len(p) > 0 && records[i].fresh && node.Labels[skyhookv1.IgnoreNodeLabel] != "true" {
			// Once per change of the node, the node as the related
			// object: the recorder folds repeats of one (Skyhook, node)
			// into a series, and would fold every node's into the
			// first without it.
			r.Recorder.Eventf(sk, node, corev1.EventTypeWarning, "MalformedNodeRecord", "ReadNode", "node %s: %s", node.Name, strings.Join(p, "; "))
		}
		for key := range rec.State {
			g.recorded[key] = true // an ignored node's too: its versions stay snapshotted
		}
		switch {
		case node.Labels[skyhookv1.IgnoreNodeLabel] == "true":
			g.ignored = append(g.ignored, skyhookv1.NodeAttention{Name: node.Name, Status: skyhookv1.StatusBlocked,
				Message: "ignored: labelled " + skyhookv1.IgnoreNodeLabel + "=true"})
		case err != nil:
			g.malformed = append(g.malformed, skyhookv1.NodeAttention{Name: node.Name, Status: skyhookv1.StatusBlocked,
				Message: "record unreadable, held until repaired or reset (skyhook node reset): " + err.Error()})
		default:
			g.work = append(g.work, &nodeWork{node: node, state: rec.State, pods: byNode[node.Name], leaving: leaving[node.Name],
				config: rec.Config, batch: rec.Batch})
		}
	}
	if len(g.malformed) > 0 {
		g.recorded = nil
	}
	sort.Slice(g.work, func(i, j int) bool { return g.work[i].node.Name < g.work[j].node.Name })
	return g, nil
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
