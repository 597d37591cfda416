package reconcile_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// The plan computed from the cluster before a rollout is the rollout that
// follows: the same nodes in the same batches of the same compartments
// (read back from the batch each node records), running the planned stages.
func TestPlanMatchesTheRollout(t *testing.T) {
	createNodes(t, canaryNodes("plan", 6, 2)...)
	c := k8sClient(t)
	ctx := context.Background()
	policy := createPolicyYAML(t, `
metadata: {name: planned}
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
	p.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "300ms"}}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "plan"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:     metav1.LabelSelector{MatchLabels: map[string]string{"pool": "plan"}},
			DeploymentPolicy: "planned", Priority: 200,
			Packages: skyhookv1.Packages{"tuning": p},
		},
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.MatchingLabels{"pool": "plan"}); err != nil {
		t.Fatal(err)
	}
	plan, err := reconcile.PlanRollout(sk, reconcile.PlanInput{Nodes: nodes.Items, Policy: policy, RuntimeTaints: stagepod.DefaultRuntimeRequiredTaints()})
	if err != nil {
		t.Fatal(err)
	}
	planned := map[string][][]string{}
	for _, b := range plan.Batches {
		var names []string
		for _, n := range b.Nodes {
			names = append(names, n.Name)
			if !slices.Equal(n.Stages, []string{"tuning 1.0.0: apply, config"}) {
				t.Errorf("%s: planned stages %v", n.Name, n.Stages)
			}
		}
		planned[b.Compartment] = append(planned[b.Compartment], names)
	}
	want := map[string][][]string{
		"canary":      {{"plan-0"}, {"plan-1"}},
		"__default__": {{"plan-2"}, {"plan-3", "plan-4"}, {"plan-5"}},
	}
	if fmt.Sprint(planned) != fmt.Sprint(want) {
		t.Fatalf("plan %v, want %v", planned, want)
	}

	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	waitSkyhook(t, "plan", 2*time.Minute, isReady)
	if err := c.List(ctx, &nodes, client.MatchingLabels{"pool": "plan"}); err != nil {
		t.Fatal(err)
	}
	byBatch := map[string]map[int][]string{}
	for _, n := range nodes.Items {
		comp := "__default__"
		if n.Labels["canary"] == "true" {
			comp = "canary"
		}
		batch, _ := strconv.Atoi(n.Annotations[skyhookv1.BatchAnnotation("plan")])
		if byBatch[comp] == nil {
			byBatch[comp] = map[int][]string{}
		}
		byBatch[comp][batch] = append(byBatch[comp][batch], n.Name)
	}
	actual := map[string][][]string{}
	for comp, batches := range byBatch {
		numbers := make([]int, 0, len(batches))
		for b := range batches {
			numbers = append(numbers, b)
		}
		sort.Ints(numbers)
		for _, b := range numbers {
			names := batches[b]
			sort.Strings(names)
			actual[comp] = append(actual[comp], names)
		}
	}
	if fmt.Sprint(actual) != fmt.Sprint(planned) {
		t.Errorf("the rollout ran batches %v; the plan said %v", actual, planned)
	}
}
