package upstreame2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// stagePodLog records the stage pods of some Skyhooks as they first appear,
// for the scenarios whose upstream asserts watch NodeWright's stage pods
// (skipped): what those asserts look for (a stage ran, on which node, in
// which order, with which interrupt or SKYHOOK_NODE_ORDER) is checked on
// this operator's stage pods instead.
type stagePodLog struct {
	mu    sync.Mutex
	owner string // the owner label of the rollouts' kind
	pods  []*corev1.Pod
}

// watchStagePodsOf records the stage pods of the named Skyhooks until the
// test ends.
func watchStagePodsOf(t *testing.T, skyhooks ...string) *stagePodLog {
	t.Helper()
	return watchRolloutStagePods(t, skyhookv1.Skyhooks, skyhooks...)
}

// watchRolloutStagePods is watchStagePodsOf for rollouts of the kind.
func watchRolloutStagePods(t *testing.T, kind skyhookv1.RolloutKind, names ...string) *stagePodLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	owner := kind.OwnerLabel()
	w, err := env.Clientset.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: owner})
	if err != nil {
		t.Fatal(err)
	}
	log := &stagePodLog{owner: owner}
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || !slices.Contains(names, pod.Labels[owner]) {
				continue
			}
			log.mu.Lock()
			if !slices.ContainsFunc(log.pods, func(p *corev1.Pod) bool { return p.UID == pod.UID }) {
				log.pods = append(log.pods, pod.DeepCopy())
			}
			log.mu.Unlock()
		}
	}()
	return log
}

// stagePod is what a scenario reads of one stage pod.
type stagePod struct {
	Skyhook, Package, Version, Stage, Node string
	Pod                                    *corev1.Pod
}

func (p stagePod) String() string {
	return fmt.Sprintf("%s/%s:%s %s on %s", p.Skyhook, p.Package, p.Version, p.Stage, p.Node)
}

// all are the stages of the pods seen so far, in the order the pods
// appeared: a pod's one, or each stage of a run's pod, in order.
func (l *stagePodLog) all() []stagePod {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]stagePod, 0, len(l.pods))
	for _, pod := range l.pods {
		for _, view := range stagepod.Views(pod) { // a pod of several packages, each in turn
			for _, stage := range stagepod.Stages(view) {
				out = append(out, stagePod{
					Skyhook: view.Labels[l.owner],
					Package: stagepod.PackageOf(view),
					Version: view.Annotations[stagepod.VersionAnnotation],
					Stage:   string(stage),
					Node:    view.Spec.NodeName,
					Pod:     view,
				})
			}
		}
	}
	return out
}

// find is the first pod seen that the predicate accepts.
func (l *stagePodLog) find(match func(stagePod) bool) (stagePod, bool) {
	for _, p := range l.all() {
		if match(p) {
			return p, true
		}
	}
	return stagePod{}, false
}

// env is the value of a variable of the pod's container of that name.
func (p stagePod) env(container, name string) (string, bool) {
	for _, c := range p.Pod.Spec.InitContainers {
		if c.Name != container {
			continue
		}
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value, true
			}
		}
	}
	return "", false
}

// args are the arguments of the pod's container of that name.
func (p stagePod) args(container string) []string {
	for _, c := range p.Pod.Spec.InitContainers {
		if c.Name == container {
			return c.Args
		}
	}
	return nil
}

// interrupt is the interrupt an interrupt stage pod runs: the agent's
// argument after the copy directory.
func (p stagePod) interrupt(t *testing.T) skyhookv1.Interrupt {
	t.Helper()
	var in skyhookv1.Interrupt
	args := p.args(p.Stage)
	if len(args) != 4 {
		t.Errorf("%s: interrupt container arguments %q, want 4 (mode, host root, copy directory, interrupt)", p, args)
		return in
	}
	if err := json.Unmarshal([]byte(args[3]), &in); err != nil {
		t.Errorf("%s: interrupt argument %q: %v", p, args[3], err)
	}
	return in
}

// interruptsOn are the interrupt stage pods seen on the node.
func (l *stagePodLog) interruptsOn(node string) []stagePod {
	var out []stagePod
	for _, p := range l.all() {
		if p.Node == node && p.Stage == string(skyhookv1.StageInterrupt) {
			out = append(out, p)
		}
	}
	return out
}
