// Package drain empties a node for an interrupt through the Eviction API,
// one step per call so the reconciler never blocks: each Step evicts what
// it can and reports what still holds the node and why.
//
// Which pods go follows NodeWright, whose fleets this operator takes over:
// pods in kube-system, pods that tolerate the unschedulable taint (they
// asked to stay on a cordoned node; DaemonSet pods get that toleration),
// and pods in phase Unknown stay; bare pods (no controller) are evicted
// like any other, through the Eviction API so PodDisruptionBudgets still
// hold, and reported so the reconciler can say that nothing recreates
// them. Unlike NodeWright, a drain also waits for evicted pods to be gone
// before the node is called drained, and a PodDisruptionBudget refusing an
// eviction holds only that node.
package drain

import (
	"context"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MirrorPodAnnotation marks a static pod's mirror; the kubelet owns it.
const MirrorPodAnnotation = "kubernetes.io/config.mirror"

// Options tune a drain.
type Options struct {
	// OperatorNamespace holds the stage pods, which stay on the node.
	OperatorNamespace string
	// StagePodLabels mark the operator's stage pods (a label each kind
	// of rollout names its own with): a pod with any of them stays.
	StagePodLabels []string
	// NonInterrupt selects pods that must end on their own before the node
	// is drained; nil selects none.
	NonInterrupt labels.Selector
	// Force deletes the pods eviction cannot move (a PodDisruptionBudget, no
	// controller), for a drain past its timeout when the Skyhook says so.
	Force bool
}

// Blocker is a pod that holds the drain, and why.
type Blocker struct {
	Pod    string // namespace/name
	Reason string
}

// Result is where a drain stands after a Step.
type Result struct {
	// Blockers hold the node: pods matching NonInterrupt (then nothing was
	// evicted), pods eviction refused, pods with no controller.
	Blockers []Blocker
	// Remaining counts the pods the node still has to lose, the blockers
	// and pods evicted but still terminating.
	Remaining int
	// EvictedBare names the pods with no controller evicted in this step:
	// nothing recreates them elsewhere.
	EvictedBare []string
}

// Done reports whether the node is drained.
func (r Result) Done() bool { return r.Remaining == 0 }

// Step looks at the pods on the node (read from reader, uncached) and
// evicts those that must go.
func Step(ctx context.Context, c client.Client, reader client.Reader, node string, opts Options) (Result, error) {
	var pods corev1.PodList
	if err := reader.List(ctx, &pods, client.MatchingFields{"spec.nodeName": node}); err != nil {
		return Result{}, fmt.Errorf("listing the pods on node %s: %w", node, err)
	}
	var res Result
	var movable []*corev1.Pod
	for i := range pods.Items {
		pod := &pods.Items[i]
		if stays(pod, opts) {
			continue
		}
		if opts.NonInterrupt != nil && !opts.NonInterrupt.Empty() && opts.NonInterrupt.Matches(labels.Set(pod.Labels)) {
			res.Blockers = append(res.Blockers, Blocker{Pod: key(pod), Reason: "matches podNonInterruptLabels; the node waits until it ends"})
			continue
		}
		movable = append(movable, pod)
	}
	if len(res.Blockers) > 0 {
		// Nothing is evicted while a pod that must not be interrupted runs:
		// the node may still be needed as it is.
		res.Remaining = len(res.Blockers) + len(movable)
		return res, nil
	}
	for _, pod := range movable {
		res.Remaining++
		if !pod.DeletionTimestamp.IsZero() {
			continue // evicted, terminating within its grace period
		}
		blocker, err := evict(ctx, c, pod, opts.Force)
		if err != nil {
			return res, err
		}
		switch {
		case blocker != "":
			res.Blockers = append(res.Blockers, Blocker{Pod: key(pod), Reason: blocker})
		case metav1.GetControllerOf(pod) == nil:
			res.EvictedBare = append(res.EvictedBare, key(pod))
		}
	}
	sort.Slice(res.Blockers, func(i, j int) bool { return res.Blockers[i].Pod < res.Blockers[j].Pod })
	return res, nil
}

// stays reports whether a pod is left on the node: finished pods and pods
// whose node lost track of them (phase Unknown), pods in kube-system,
// pods that tolerate the unschedulable taint, DaemonSet pods (their
// controller would put them back), mirror pods and the operator's own
// stage pods.
func stays(pod *corev1.Pod, opts Options) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown:
		return true
	}
	if pod.Namespace == metav1.NamespaceSystem || toleratesCordon(pod) {
		return true
	}
	if _, mirror := pod.Annotations[MirrorPodAnnotation]; mirror {
		return true
	}
	if pod.Namespace == opts.OperatorNamespace && slices.ContainsFunc(opts.StagePodLabels, func(l string) bool { return pod.Labels[l] != "" }) {
		return true
	}
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "DaemonSet" {
		return true
	}
	return false
}

// toleratesCordon reports whether the pod tolerates the taint a cordon
// puts on the node: by its key, or by tolerating every taint.
func toleratesCordon(pod *corev1.Pod) bool {
	for _, t := range pod.Spec.Tolerations {
		if t.Key == corev1.TaintNodeUnschedulable || (t.Key == "" && t.Operator == corev1.TolerationOpExists) {
			return true
		}
	}
	return false
}

// evict asks the Eviction API to move the pod, or with force deletes it;
// it returns why the pod cannot go now, empty when it is on its way.
func evict(ctx context.Context, c client.Client, pod *corev1.Pod, force bool) (string, error) {
	if force {
		if err := c.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			return "", err
		}
		return "", nil
	}
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}
	err := c.SubResource("eviction").Create(ctx, pod, eviction)
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return "", nil
	case apierrors.IsTooManyRequests(err):
		return "a PodDisruptionBudget does not allow the eviction: " + err.Error(), nil
	default:
		return "", fmt.Errorf("evicting %s: %w", key(pod), err)
	}
}

func key(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }
