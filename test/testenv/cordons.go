package testenv

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
)

// CordonWatcher keeps the most nodes it saw cordoned at once among the
// nodes a label selector picks, overall and in one failure domain (the
// nodes' value of a label): what a fleet budget caps. An informer, so a
// watch the apiserver ends is resumed without losing an event.
type CordonWatcher struct {
	mu           sync.Mutex
	domainKey    string
	cordoned     map[string]string // node → domain, while cordoned
	most         int
	mostInDomain int
}

// WatchCordons starts a CordonWatcher until ctx ends; domainKey may be
// empty (one domain).
func WatchCordons(ctx context.Context, c *cluster.Cluster, selector, domainKey string) (*CordonWatcher, error) {
	w := &CordonWatcher{domainKey: domainKey, cordoned: map[string]string{}}
	factory := informers.NewSharedInformerFactoryWithOptions(c.Clientset, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	return w, follow(ctx, factory, factory.Core().V1().Nodes().Informer(), w.observe)
}

// follow calls observe with every object the informer sees, present or
// deleted (a deletion it missed the end of included), and returns once its
// cache has synced.
func follow(ctx context.Context, factory informers.SharedInformerFactory, informer cache.SharedIndexInformer, observe func(o any, present bool)) error {
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { observe(o, true) },
		UpdateFunc: func(_, o any) { observe(o, true) },
		DeleteFunc: func(o any) {
			if gone, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = gone.Obj
			}
			observe(o, false)
		},
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return nil
}

func (w *CordonWatcher) observe(o any, present bool) {
	n, ok := o.(*corev1.Node)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !present || !n.Spec.Unschedulable {
		delete(w.cordoned, n.Name)
		return
	}
	w.cordoned[n.Name] = n.Labels[w.domainKey]
	w.most = max(w.most, len(w.cordoned))
	perDomain := map[string]int{}
	for _, d := range w.cordoned {
		perDomain[d]++
		w.mostInDomain = max(w.mostInDomain, perDomain[d])
	}
}

// Peaks are the most nodes seen cordoned at once, overall and in one
// domain.
func (w *CordonWatcher) Peaks() (overall, inDomain int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.most, w.mostInDomain
}
