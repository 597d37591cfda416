package testenv

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/scheme"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// Invariants watches a whole test package's cluster for what must never
// happen, whatever the test: more nodes in progress than a Skyhook's
// interruption budget allows, a node interrupted twice for one generation
// of a Skyhook, a node complete for a Skyhook and still cordoned by it.
type Invariants struct {
	mu         sync.Mutex
	violations []string
	skyhooks   []skyhookv1.Skyhook
	nodes      map[string]*corev1.Node
	interrupts map[string]string // skyhook/node/generation → the interrupt pod that ran
}

// WatchInvariants starts watching until ctx ends; operatorNamespace holds
// the stage pods.
func WatchInvariants(ctx context.Context, c *cluster.Cluster, operatorNamespace string) (*Invariants, error) {
	cl, err := client.New(c.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, err
	}
	inv := &Invariants{nodes: map[string]*corev1.Node{}, interrupts: map[string]string{}}
	nodes, err := c.Clientset.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	go func() {
		for ev := range nodes.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok {
				inv.node(n, ev.Type == "DELETED")
			}
		}
	}()
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		var list skyhookv1.SkyhookList
		if cl.List(ctx, &list) == nil {
			inv.mu.Lock()
			inv.skyhooks = list.Items
			inv.mu.Unlock()
		}
		pods, err := c.Clientset.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: simnode.InterruptPodSelector})
		if err == nil {
			inv.interruptPods(pods.Items)
		}
	}, 200*time.Millisecond)
	return inv, nil
}

// Violations returns what went wrong so far.
func (inv *Invariants) Violations() []string {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return append([]string(nil), inv.violations...)
}

func (inv *Invariants) violate(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, v := range inv.violations {
		if v == msg {
			return
		}
	}
	inv.violations = append(inv.violations, msg)
}

// node checks the budgets and cordons after a node event.
func (inv *Invariants) node(n *corev1.Node, deleted bool) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if deleted {
		delete(inv.nodes, n.Name)
		return
	}
	inv.nodes[n.Name] = n
	for i := range inv.skyhooks {
		sk := &inv.skyhooks[i]
		key := skyhookv1.StatusKey(sk.Name)
		if n.Labels[key] == string(skyhookv1.StatusComplete) && n.Spec.Unschedulable &&
			strings.HasPrefix(n.Annotations[skyhookv1.MetadataPrefix+"/cordoned-by"], sk.Name+"/") {
			inv.violate("node %s is complete for Skyhook %s and still cordoned by it", n.Name, sk.Name)
		}
		if limit, ok := inv.budget(sk); ok {
			busy := 0
			for _, other := range inv.nodes {
				if s := other.Labels[key]; s == string(skyhookv1.StatusInProgress) || s == string(skyhookv1.StatusErroring) {
					busy++
				}
			}
			if busy > limit {
				inv.violate("Skyhook %s had %d nodes in progress, over its budget of %d", sk.Name, busy, limit)
			}
		}
	}
}

// budget is a Skyhook's interruption budget over the nodes it selects now,
// false for none (or a DeploymentPolicy, which its own tests watch).
func (inv *Invariants) budget(sk *skyhookv1.Skyhook) (int, bool) {
	b := sk.Spec.InterruptionBudget
	if b.Count != nil {
		return *b.Count, true
	}
	if b.Percent == nil {
		return 0, false
	}
	sel, err := metav1.LabelSelectorAsSelector(&sk.Spec.NodeSelector)
	if err != nil {
		return 0, false
	}
	selected := 0
	for _, n := range inv.nodes {
		if sel.Matches(labels.Set(n.Labels)) && n.Labels[skyhookv1.IgnoreNodeLabel] != "true" {
			selected++
		}
	}
	return max(1, selected**b.Percent/100), true
}

// interruptPods checks that no node ran two interrupts for one generation
// of a Skyhook: two interrupt pods whose interrupt container exited 0.
func (inv *Invariants) interruptPods(pods []corev1.Pod) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	for i := range pods {
		pod := &pods[i]
		ran := false
		for _, s := range pod.Status.InitContainerStatuses {
			if s.Name == "interrupt" && s.State.Terminated != nil && s.State.Terminated.ExitCode == 0 {
				ran = true
			}
		}
		if !ran {
			continue
		}
		generation, _ := strconv.Atoi(pod.Annotations[skyhookv1.MetadataPrefix+"/generation"])
		key := fmt.Sprintf("%s/%s/%d", pod.Labels[skyhookv1.MetadataPrefix+"/skyhook"], pod.Spec.NodeName, generation)
		if first, seen := inv.interrupts[key]; seen && first != pod.Name {
			inv.violate("node %s was interrupted twice for generation %d of Skyhook %s (%s and %s)",
				pod.Spec.NodeName, generation, pod.Labels[skyhookv1.MetadataPrefix+"/skyhook"], first, pod.Name)
		} else {
			inv.interrupts[key] = pod.Name
		}
	}
}
