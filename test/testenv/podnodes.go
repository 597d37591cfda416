package testenv

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// PodNodeWatcher keeps the most nodes it saw at once with a live stage pod
// of a Skyhook: running, finished, or deleted but not gone yet (its pause
// container may still be up). The budget bounds these too, not only the
// nodes whose status says in progress.
type PodNodeWatcher struct {
	mu    sync.Mutex
	pods  map[string]map[string]bool // node → live pod UIDs
	most  int
	nodes int
	// created counts the pods seen for the first time.
	created int
	// ended is when each pod not deleted yet was first seen done (every
	// init container ended, or failed); reactions are how long after
	// that each such pod was seen deleted: the operator's reaction to a
	// stage's end, as a watcher of the apiserver sees it.
	ended     map[string]time.Time
	reactions []time.Duration
}

// WatchPodNodes starts a PodNodeWatcher on the Skyhook's stage pods in
// namespace until ctx ends.
func WatchPodNodes(ctx context.Context, c *cluster.Cluster, namespace string, rollout skyhookv1.RolloutRef) (*PodNodeWatcher, error) {
	w := &PodNodeWatcher{pods: map[string]map[string]bool{}, ended: map[string]time.Time{}}
	factory := informers.NewSharedInformerFactoryWithOptions(c.Clientset, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = rollout.Kind.OwnerLabel() + "=" + rollout.Name }))
	return w, follow(ctx, factory, factory.Core().V1().Pods().Informer(), w.observe)
}

func (w *PodNodeWatcher) observe(o any, live bool) {
	pod, ok := o.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timeReaction(pod, live)
	onNode := w.pods[pod.Spec.NodeName]
	before := len(onNode) > 0
	switch {
	case live && onNode == nil:
		onNode = map[string]bool{string(pod.UID): true}
		w.pods[pod.Spec.NodeName] = onNode
		w.created++
	case live:
		if !onNode[string(pod.UID)] {
			w.created++
		}
		onNode[string(pod.UID)] = true
	default:
		delete(onNode, string(pod.UID))
	}
	switch after := len(onNode) > 0; {
	case after && !before:
		w.nodes++
	case before && !after:
		w.nodes--
	}
	w.most = max(w.most, w.nodes)
}

// timeReaction notes when the pod is first seen done, and when it is then
// first seen deleted (a deletion timestamp, or gone) how long that took.
func (w *PodNodeWatcher) timeReaction(pod *corev1.Pod, live bool) {
	uid := string(pod.UID)
	endedAt, seenEnded := w.ended[uid]
	switch {
	case (!live || pod.DeletionTimestamp != nil) && seenEnded:
		w.reactions = append(w.reactions, time.Since(endedAt))
		delete(w.ended, uid)
	case !live || pod.DeletionTimestamp != nil:
		delete(w.ended, uid)
	case !seenEnded && stagepod.Read(pod).Result != stagepod.Running:
		w.ended[uid] = time.Now()
	}
}

// TakeReactions returns the reactions (a stage pod's end to its delete)
// seen since the last call, sorted.
func (w *PodNodeWatcher) TakeReactions() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.reactions
	w.reactions = nil
	slices.Sort(out)
	return out
}

// TakeMost returns the most nodes seen at once with a live stage pod since
// the last call, and starts counting again from the nodes that have one now.
func (w *PodNodeWatcher) TakeMost() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	most := w.most
	w.most = w.nodes
	return most
}

// Created counts the stage pods seen so far.
func (w *PodNodeWatcher) Created() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.created
}
