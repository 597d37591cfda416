package reconcile

import (
	"context"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

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
}

// record is the node's record as of the end of the pass.
func (w *nodeWork) record() skyhookv1.NodeState {
	if w.written != nil {
		return w.written
	}
	return w.state
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
