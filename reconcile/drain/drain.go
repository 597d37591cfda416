// Package drain empties a node for an interrupt, one step per call so the
// reconciler never blocks: each Step removes what it can and reports what
// still holds the node and why.
//
// Which pods go, and in what order the rules apply, follows NodeWright
// v0.20, whose fleets this operator takes over (Decide): finished pods,
// the operator's own stage pods, pods that tolerate the cordon, DaemonSet
// pods (with ignoreDaemonSets), kube-system and mirror pods stay;
// terminating pods are waited for; a pod that says it may be interrupted
// now goes (Interruptible); a pod matching podNonInterruptLabels holds the
// whole node; a pod no controller recreates (unless force) or
// one with emptyDir data (unless deleteEmptyDirData) blocks it; the rest
// are evicted through the Eviction API, so PodDisruptionBudgets hold, or
// deleted with disableEviction. A budget's refusal is a wait, not an
// error: the pod is asked again at most every 30 s (Throttle). Unlike
// NodeWright, a drain also waits for removed pods to be gone before the
// node is called drained.
package drain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// MirrorPodAnnotation marks a static pod's mirror; the kubelet owns it.
const MirrorPodAnnotation = "kubernetes.io/config.mirror"

// InterruptibleAnnotations, set to "true" on a pod, say the workload may be
// interrupted now (a training job after its checkpoint, say): a pod
// matching podNonInterruptLabels no longer holds the node, and the pod is
// deleted rather than evicted, so its PodDisruptionBudget does not hold it
// either. Either prefix serves every kind of rollout: a workload need not
// know which one drains its node.
var InterruptibleAnnotations = []string{"skyhook.nvidia.com/interruptible", "nodewright.nvidia.com/interruptible"}

// Interruptible reports whether the pod says it may be interrupted now.
func Interruptible(pod *corev1.Pod) bool {
	return slices.ContainsFunc(InterruptibleAnnotations, func(key string) bool { return pod.Annotations[key] == "true" })
}

// Why a pod holds a drain: NodeWright's reasons (its drainBlocked_
// annotation and DrainBlocked condition say them), and this operator's for
// a pod matching podNonInterruptLabels (NodeWright reports those as
// Blocked, NonInterruptPodsRunning).
const (
	ReasonPodDisruptionBudget = "PodDisruptionBudget"
	ReasonUnmanagedPod        = "UnmanagedPod"
	ReasonEmptyDirData        = "EmptyDirData"
	ReasonNonInterrupt        = "NonInterruptPod"
)

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
	// Config is NodeWright's drainConfig; nil keeps its defaults.
	Config *skyhookv1.DrainConfig
	// Force deletes every pod that would otherwise block or be evicted
	// (drain.onTimeout Delete, past its timeout).
	Force bool
	// Throttle remembers the pods a PodDisruptionBudget refused lately;
	// nil asks every time.
	Throttle *Throttle
}

// Blocker is a pod that holds the drain, and why, as NodeWright writes it
// in its drainBlocked_<name> annotation.
type Blocker struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Reason    string `json:"reason"`
	// Detail is the API server's words for a PodDisruptionBudget refusal.
	Detail string `json:"detail,omitempty"`
}

// Pod is the blocker's namespace/name.
func (b Blocker) Pod() string { return b.Namespace + "/" + b.Name }

// Result is where a drain stands after a Step.
type Result struct {
	// Blockers hold the node: pods matching NonInterrupt (then nothing was
	// removed), pods eviction refused, pods the drain may not remove.
	Blockers []Blocker
	// Remaining counts the pods the node still has to lose: the blockers
	// and pods removed but still terminating.
	Remaining int
	// EvictedBare names the pods with no controller removed in this step:
	// nothing recreates them elsewhere.
	EvictedBare []string
}

// Done reports whether the node is drained.
func (r Result) Done() bool { return r.Remaining == 0 }

// Verdict is what a drain does with one pod.
type Verdict int

const (
	// Stay leaves the pod on the node.
	Stay Verdict = iota
	// Wait waits for a pod already terminating.
	Wait
	// Block holds the node for the pod (the reason says why).
	Block
	// Remove evicts or deletes the pod.
	Remove
)

// Decide is what a drain does with a pod, in NodeWright's order.
func Decide(pod *corev1.Pod, opts Options) (Verdict, string) {
	cfg := opts.Config
	if cfg == nil {
		cfg = &skyhookv1.DrainConfig{}
	}
	switch {
	case pod.Status.Phase != corev1.PodRunning && pod.Status.Phase != corev1.PodPending:
		return Stay, ""
	case pod.Namespace == opts.OperatorNamespace && slices.ContainsFunc(opts.StagePodLabels, func(l string) bool { return pod.Labels[l] != "" }):
		return Stay, ""
	case toleratesCordon(pod):
		return Stay, ""
	case isDaemonSetPod(pod) && ptr.Deref(cfg.IgnoreDaemonSets, true):
		return Stay, ""
	case pod.Namespace == metav1.NamespaceSystem:
		return Stay, ""
	case pod.Annotations[MirrorPodAnnotation] != "":
		return Stay, ""
	case !pod.DeletionTimestamp.IsZero():
		return Wait, "" // NodeWright v0.19: a terminating pod holds the drain until it is gone
	case Interruptible(pod):
		return Remove, "" // the workload says it may go now
	case opts.NonInterrupt != nil && !opts.NonInterrupt.Empty() && opts.NonInterrupt.Matches(labels.Set(pod.Labels)):
		return Block, ReasonNonInterrupt
	case opts.Force:
		return Remove, ""
	case metav1.GetControllerOf(pod) == nil && !ptr.Deref(cfg.Force, true):
		return Block, ReasonUnmanagedPod
	case hasEmptyDir(pod) && !ptr.Deref(cfg.DeleteEmptyDirData, true):
		return Block, ReasonEmptyDirData
	}
	return Remove, ""
}

// Step looks at the pods on the node (read from reader, uncached) and
// removes those that must go.
func Step(ctx context.Context, c client.Client, reader client.Reader, node string, opts Options) (Result, error) {
	var pods corev1.PodList
	if err := reader.List(ctx, &pods, client.MatchingFields{"spec.nodeName": node}); err != nil {
		return Result{}, fmt.Errorf("listing the pods on node %s: %w", node, err)
	}
	var res Result
	var removable []*corev1.Pod
	holdsNode := false
	for i := range pods.Items {
		pod := &pods.Items[i]
		switch verdict, reason := Decide(pod, opts); verdict {
		case Wait:
			res.Remaining++
		case Block:
			res.Remaining++
			res.Blockers = append(res.Blockers, Blocker{Namespace: pod.Namespace, Name: pod.Name, Reason: reason})
			holdsNode = holdsNode || reason == ReasonNonInterrupt
		case Remove:
			res.Remaining++
			removable = append(removable, pod)
		}
	}
	// Nothing is removed while a pod that must not be interrupted runs:
	// the node may still be needed as it is.
	if !holdsNode {
		if err := remove(ctx, c, removable, opts, &res); err != nil {
			return res, err
		}
	}
	sort.Slice(res.Blockers, func(i, j int) bool { return res.Blockers[i].Pod() < res.Blockers[j].Pod() })
	return res, nil
}

// remove evicts (or deletes) the pods, noting those a budget refused.
func remove(ctx context.Context, c client.Client, pods []*corev1.Pod, opts Options, res *Result) error {
	disableEviction := opts.Force || (opts.Config != nil && ptr.Deref(opts.Config.DisableEviction, false))
	grace := gracePeriod(opts.Config)
	for _, pod := range pods {
		// A delete does not ask the budgets: nothing to wait for.
		if detail, refused := opts.Throttle.Refused(pod.UID); refused && !disableEviction && !Interruptible(pod) {
			res.Blockers = append(res.Blockers, Blocker{Namespace: pod.Namespace, Name: pod.Name, Reason: ReasonPodDisruptionBudget, Detail: detail})
			continue
		}
		detail, err := evict(ctx, c, pod, disableEviction || Interruptible(pod), grace)
		if err != nil {
			return err
		}
		switch {
		case detail != "":
			opts.Throttle.Note(pod.UID, detail)
			res.Blockers = append(res.Blockers, Blocker{Namespace: pod.Namespace, Name: pod.Name, Reason: ReasonPodDisruptionBudget, Detail: detail})
		case metav1.GetControllerOf(pod) == nil:
			res.EvictedBare = append(res.EvictedBare, pod.Namespace+"/"+pod.Name)
		}
	}
	return nil
}

// gracePeriod is drainConfig.gracePeriod in whole seconds, rounded up as
// NodeWright rounds it; nil for each pod's own.
func gracePeriod(cfg *skyhookv1.DrainConfig) *int64 {
	if cfg == nil || cfg.GracePeriod == nil {
		return nil
	}
	seconds := int64((cfg.GracePeriod.Duration + time.Second - 1) / time.Second)
	return &seconds
}

// evict asks the Eviction API to move the pod, or deletes it; it returns
// the API server's words when a PodDisruptionBudget refuses, empty when
// the pod is on its way. Any other refusal is an error.
func evict(ctx context.Context, c client.Client, pod *corev1.Pod, deleteIt bool, grace *int64) (string, error) {
	if deleteIt {
		opts := []client.DeleteOption{}
		if grace != nil {
			opts = append(opts, client.GracePeriodSeconds(*grace))
		}
		return "", client.IgnoreNotFound(c.Delete(ctx, pod, opts...))
	}
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}
	if grace != nil {
		eviction.DeleteOptions = &metav1.DeleteOptions{GracePeriodSeconds: grace}
	}
	err := c.SubResource("eviction").Create(ctx, pod, eviction)
	if err == nil || apierrors.IsNotFound(err) {
		return "", nil
	}
	if detail, ok := budgetRefusal(err); ok {
		return detail, nil
	}
	return "", fmt.Errorf("evicting %s/%s: %w", pod.Namespace, pod.Name, err)
}

// budgetRefusal reads a 429 whose cause is a PodDisruptionBudget: the
// cause's message (the budget and its numbers), as NodeWright reports it.
func budgetRefusal(err error) (string, bool) {
	var status apierrors.APIStatus
	if !apierrors.IsTooManyRequests(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return "", false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Type == policyv1.DisruptionBudgetCause {
			return cause.Message, true
		}
	}
	return "", false
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

func isDaemonSetPod(pod *corev1.Pod) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.Kind == "DaemonSet"
}

func hasEmptyDir(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.EmptyDir != nil })
}
