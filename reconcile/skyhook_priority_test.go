package reconcile_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// On each node a Skyhook starts only once every Skyhook with a lower
// priority number that selects the node is complete there; a disabled one
// holds nobody back.
func TestPriorityOrdersSkyhooksPerNode(t *testing.T) {
	createNodes(t, simnode.Numbered("priority", 2, map[string]string{"pool": "priority"})...)
	c := k8sClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := env.Clientset.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: "pool=priority"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var violations []string
	started := map[string]bool{}
	go func() {
		for ev := range w.ResultChan() {
			node, ok := ev.Object.(*corev1.Node)
			if !ok {
				continue
			}
			mu.Lock()
			if _, ok := node.Annotations[skyhookv1.NodeStateAnnotation("later")]; ok && !started[node.Name] {
				started[node.Name] = true
				if node.Labels[skyhookv1.StatusKey("earlier")] != "complete" {
					violations = append(violations, node.Name+": later started while earlier was "+node.Labels[skyhookv1.StatusKey("earlier")])
				}
			}
			mu.Unlock()
		}
	}()

	make := func(name string, priority int, stage string, annotations map[string]string) *skyhookv1.Skyhook {
		p := pkg("1.0.0", "ghcr.io/x/"+name, nil)
		p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: stage}}
		return &skyhookv1.Skyhook{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
			Spec: skyhookv1.SkyhookSpec{
				NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "priority", "go": "yes"}},
				Priority:     priority,
				Packages:     skyhookv1.Packages{"tuning": p},
			},
		}
	}
	// The Skyhooks exist before they select any node; then the nodes are
	// labelled, so both see them at once and only priority orders them.
	for _, sk := range []*skyhookv1.Skyhook{
		make("later", 20, "200ms", nil),
		make("earlier", 10, "3s", nil),
		make("off", 5, "200ms", map[string]string{skyhookv1.DisableAnnotation: "true"}),
	} {
		if err := c.Create(ctx, sk); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	}
	for _, name := range []string{"priority-0", "priority-1"} {
		patch := []byte(`{"metadata":{"labels":{"go":"yes"}}}`)
		if _, err := env.Clientset.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// While it waits, later says for whom.
	waitSkyhook(t, "later", 30*time.Second, func(sk *skyhookv1.Skyhook) bool {
		return strings.Contains(conditions.GetMessage(sk, meta.ReadyCondition), "2 waiting for Skyhooks that go first there: earlier (2)")
	})
	// Its nodes read waiting meanwhile, as NodeWright marks them.
	eventually(t, "later's nodes to read waiting", func() bool { return statusesOf(t, "later", "go=yes") == "waiting waiting" })
	waitSkyhook(t, "later", time.Minute, isReady)
	waitSkyhook(t, "earlier", time.Minute, isReady)

	mu.Lock()
	defer mu.Unlock()
	if len(violations) > 0 {
		t.Fatal(violations)
	}
	if len(started) != 2 {
		t.Fatalf("the watcher saw later start on %v, want both nodes", started)
	}
	var node corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: "priority-0"}, &node); err != nil {
		t.Fatal(err)
	}
	if _, ok := node.Annotations[skyhookv1.NodeStateAnnotation("off")]; ok {
		t.Error("the disabled Skyhook wrote a record")
	}
}
