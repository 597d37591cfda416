package reconcile_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// batchWatcher records, per compartment, how many nodes started in each
// batch (a batch begins when none of the compartment's nodes is busy) and
// the most busy at once.
type batchWatcher struct {
	mu      sync.Mutex
	status  map[string]string
	busy    map[string]int
	batches map[string][]int
	most    map[string]int
}

func (b *batchWatcher) observe(node, compartment, status string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	was, is := b.status[node] == "in_progress", status == "in_progress"
	b.status[node] = status
	switch {
	case is && !was:
		if b.busy[compartment] == 0 {
			b.batches[compartment] = append(b.batches[compartment], 0)
		}
		b.busy[compartment]++
		b.batches[compartment][len(b.batches[compartment])-1]++
	case was && !is:
		b.busy[compartment]--
	}
	b.most[compartment] = max(b.most[compartment], b.busy[compartment])
}

// Two compartments, each within its own budget and strategy: the canary
// compartment one node at a time, the rest in linear batches of 1, 2, 3
// and what is left.
func TestDeploymentPolicyCompartmentsAndLinearBatches(t *testing.T) {
	createNodes(t, canaryNodes("policy", 10, 2)...)
	c := k8sClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &batchWatcher{status: map[string]string{}, busy: map[string]int{}, batches: map[string][]int{}, most: map[string]int{}}
	w, err := env.Clientset.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: "pool=policy"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range w.ResultChan() {
			if node, ok := ev.Object.(*corev1.Node); ok {
				comp := "rest"
				if node.Labels["canary"] == "true" {
					comp = "canary"
				}
				b.observe(node.Name, comp, node.Labels[skyhookv1.StatusKey("policy")])
			}
		}
	}()

	createPolicyYAML(t, `
metadata: {name: batches}
spec:
  default:
    budget: {count: 10}
    strategy: {linear: {initialBatch: 1, delta: 1}}
  compartments:
  - name: canary
    selector: {matchLabels: {canary: "true"}}
    budget: {count: 1}
    strategy: {fixed: {initialBatch: 1}}
`)
	p := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "500ms"}}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "policy"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:     metav1.LabelSelector{MatchLabels: map[string]string{"pool": "policy"}},
			DeploymentPolicy: "batches",
			Packages:         skyhookv1.Packages{"tuning": p},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	waitSkyhook(t, "policy", 2*time.Minute, isReady)

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.most["canary"] != 1 || len(b.batches["canary"]) != 2 {
		t.Errorf("canary: most %d at once in batches %v; want one at a time, two batches", b.most["canary"], b.batches["canary"])
	}
	if got := b.batches["rest"]; len(got) != 4 || got[0] != 1 || got[1] != 2 || got[2] != 3 || got[3] != 2 {
		t.Errorf("rest: batches %v, want [1 2 3 2] (linear 1, 2, 3, then the 2 left of a batch of 4)", got)
	}
}
