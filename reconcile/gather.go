package reconcile

import (
	"context"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/fleet"
	"github.com/skyhook-go/skyhook/reconcile/retention"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/reconcile/upstreamjob"
)

// What a pass reads from the cache: the selected nodes, their records and
// stage pods; and what it asks of a node.

// refresh reads a node the view keeps as a stand-in, for this pass (see
// nodeWork.stub); the pass stubs it again when it ends.
func (pass *rolloutPass) refresh(ctx context.Context, w *nodeWork) (bool, error) {
	stubbed := w.stubbed
	found, err := pass.r.refresh(ctx, w)
	if found && stubbed {
		pass.refreshed = append(pass.refreshed, w)
	}
	return found, err
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
	kind := skyhookv1.KindOf(sk)
	for i := range nodes {
		node := &nodes[i]
		rec, err := records[i].Record, records[i].Err
		if p := records[i].Problems; len(p) > 0 && records[i].Fresh && node.Labels[kind.IgnoreNodeLabel()] != "true" {
			// Once per change of the node, the node as the related
			// object: the recorder folds repeats of one (Skyhook, node)
			// into a series, and would fold every node's into the
			// first without it.
			r.Recorder.Eventf(sk, node, corev1.EventTypeWarning, "MalformedNodeRecord", "ReadNode", "node %s: %s", node.Name, strings.Join(p, "; "))
		}
		switch {
		case node.Labels[kind.IgnoreNodeLabel()] == "true":
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
		if err := r.Client.List(ctx, &list, client.InNamespace(r.Namespace), client.MatchingLabels{stagepod.OwnerLabel(skyhookv1.KindOf(sk)): sk.Name}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, nil, nil, err
		}
		pods = list.Items
		standIns, err := r.upstreamJobs(ctx, sk, "")
		if err != nil {
			return nil, nil, nil, err
		}
		pods = append(pods, standIns...)
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
			if err := r.Client.List(ctx, &list, client.InNamespace(r.Namespace), client.MatchingLabels{stagepod.OwnerLabel(skyhookv1.KindOf(sk)): sk.Name},
				client.MatchingFields{podNodeField: name}, client.UnsafeDisableDeepCopy); err != nil {
				return nil, nil, nil, err
			}
			pods = append(pods, list.Items...)
			standIns, err := r.upstreamJobs(ctx, sk, name)
			if err != nil {
				return nil, nil, nil, err
			}
			pods = append(pods, standIns...)
		}
	}
	byNode, leaving := map[string]map[string][]*corev1.Pod{}, map[string]map[string][]*corev1.Pod{}
	for i := range pods {
		pod := &pods[i]
		r.memory.Created.Drop(sk.UID, pod.Name) // the cache shows it
		if retention.Retained(pod) {
			continue // kept for its logs only: no stage's pod any more
		}
		if ofAnotherObject(pod, sk) {
			continue // a deleted rollout's of the same name: the garbage collector's
		}
		into := byNode
		// A pod this operator took out (deleted, or retired for its logs)
		// that the cache shows as it was is leaving too: judged again, a
		// failed try would be retried a second time.
		if !pod.DeletionTimestamp.IsZero() || r.memory.Deleted.Has(sk.UID, string(pod.UID)) {
			into = leaving
		}
		pkgs := into[pod.Spec.NodeName]
		if pkgs == nil {
			pkgs = map[string][]*corev1.Pod{}
			into[pod.Spec.NodeName] = pkgs
		}
		for _, view := range stagepod.Views(pod) { // a pod of several packages under each
			pkgs[stagepod.PackageOf(view)] = append(pkgs[stagepod.PackageOf(view)], view)
		}
	}
	return nodes.Items, byNode, leaving, nil
}

// upstreamJobs are the stage Jobs NodeWright left for the rollout (on the
// node, or on every node when node is empty), as stand-in stage pods
// (package upstreamjob).
func (r *SkyhookReconciler) upstreamJobs(ctx context.Context, sk *skyhookv1.Skyhook, node string) ([]corev1.Pod, error) {
	kind := skyhookv1.KindOf(sk)
	opts := []client.ListOption{client.InNamespace(r.Namespace), client.MatchingLabels{upstreamjob.NameLabel(kind): sk.Name}, client.UnsafeDisableDeepCopy}
	if node != "" {
		opts = append(opts, client.MatchingFields{jobNodeField: node})
	}
	var jobs batchv1.JobList
	if err := r.Client.List(ctx, &jobs, opts...); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for i := range jobs.Items {
		job := &jobs.Items[i]
		step, ok := upstreamjob.StepOf(job, kind)
		if !ok || !job.DeletionTimestamp.IsZero() {
			continue
		}
		if pod, ok := upstreamjob.StandIn(job, kind, stagepod.ConfigHash(sk.Spec.Packages[step.Package].ConfigMap)); ok {
			out = append(out, *pod)
		}
	}
	return out, nil
}

// taintList names the taints for a message.
func taintList(taints []corev1.Taint) string {
	parts := make([]string, len(taints))
	for i, t := range taints {
		parts[i] = t.ToString()
	}
	return strings.Join(parts, ", ")
}

// ofAnotherObject reports whether the pod's controller is another object
// of the rollout's kind and name: one deleted and created again (a GitOps
// replace) leaves pods of the same labels, and of the same names for the
// same generation, until the garbage collector removes them. Their
// outcomes are not this object's.
func ofAnotherObject(pod *corev1.Pod, sk *skyhookv1.Skyhook) bool {
	owner := metav1.GetControllerOf(pod)
	return owner != nil && owner.Kind == skyhookv1.KindOf(sk).Kind && owner.Name == sk.Name && owner.UID != sk.UID
}
