package opupgrade

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// stagePod is what the test keeps of a stage pod: what it ran, where, and
// whether it succeeded.
type stagePod struct {
	name      string
	node      string
	pkg       string
	version   string
	stages    []string // one, or a stage run's (apply,config)
	succeeded bool
}

// key names what the pod ran: node, package, version and stages.
func (p stagePod) key() string { return p.stageKey(strings.Join(p.stages, ",")) }

// stageKey names one stage of the pod's package: node, package, version
// and stage.
func (p stagePod) stageKey(stage string) string {
	return fmt.Sprintf("%s/%s@%s/%s", p.node, p.pkg, p.version, stage)
}

// podLog follows every stage pod of one Skyhook through an informer
// (started before any operator, so none is missed), keeping each pod's
// last state, deleted pods included.
type podLog struct {
	skyhook string
	mu      sync.Mutex
	pods    map[podPart]*stagePod
}

// podPart is one package of a stage pod (a pod of several packages holds
// each in turn, see stagepod.Views).
type podPart struct {
	uid types.UID
	pkg string
}

func watchStagePods(t *testing.T, skyhook string) *podLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l := &podLog{skyhook: skyhook, pods: map[podPart]*stagePod{}}
	factory := informers.NewSharedInformerFactoryWithOptions(env.Clientset, 0, informers.WithNamespace(operatorNamespace))
	_, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { l.observe(obj) },
		UpdateFunc: func(_, obj any) { l.observe(obj) },
		DeleteFunc: func(obj any) {
			if gone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = gone.Obj
			}
			l.observe(obj)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return l
}

func (l *podLog) observe(obj any) {
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Labels[stagepod.SkyhookLabel] != l.skyhook {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, view := range stagepod.Views(p) {
		part := podPart{p.UID, stagepod.PackageOf(view)}
		sp := l.pods[part]
		if sp == nil {
			sp = &stagePod{name: p.Name, node: p.Spec.NodeName, pkg: part.pkg, version: view.Annotations[stagepod.VersionAnnotation]}
			for _, stage := range stagepod.Stages(view) {
				sp.stages = append(sp.stages, string(stage))
			}
			l.pods[part] = sp
		}
		sp.succeeded = sp.succeeded || stageSucceeded(view)
	}
}

// stageSucceeded: every init container (copy, the stage, its check) ended
// with 0, which is when the operator takes the stage for done.
func stageSucceeded(p *corev1.Pod) bool {
	if len(p.Status.InitContainerStatuses) == 0 || len(p.Status.InitContainerStatuses) < len(p.Spec.InitContainers) {
		return false
	}
	for _, s := range p.Status.InitContainerStatuses {
		if s.State.Terminated == nil || s.State.Terminated.ExitCode != 0 {
			return false
		}
	}
	return true
}

// seen is the set of pods observed so far.
func (l *podLog) seen() map[types.UID]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[types.UID]bool, len(l.pods))
	for part := range l.pods {
		out[part.uid] = true
	}
	return out
}

// since are the pods not in before, sorted by node and stage.
func (l *podLog) since(before map[types.UID]bool) []stagePod {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []stagePod
	for part, p := range l.pods {
		if !before[part.uid] {
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// packagesPerPod counts, for each node, the packages each of its pods
// held.
func (l *podLog) packagesPerPod() map[string]map[types.UID]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]map[types.UID]int{}
	for part, p := range l.pods {
		if out[p.node] == nil {
			out[p.node] = map[types.UID]int{}
		}
		out[p.node][part.uid]++
	}
	return out
}

// all are every pod observed.
func (l *podLog) all() []stagePod { return l.since(nil) }

// succeededByStage counts the pods that succeeded, by each stage they ran.
func (l *podLog) succeededByStage() map[string]int {
	counts := map[string]int{}
	for _, p := range l.all() {
		for _, stage := range p.stages {
			if p.succeeded {
				counts[p.stageKey(stage)]++
			}
		}
	}
	return counts
}
