package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// plan of a Skyhook file over four Ready nodes (one ignored, one with a
// taint the Skyhook does not tolerate) with a budget of one: waves of one,
// the blocked nodes and why. (That a plan matches the rollout that follows
// is TestPlanMatchesTheRollout in reconcile.)
func TestPlan(t *testing.T) {
	c := testenv.Client(t, env)
	ctx := context.Background()
	var nodes []simnode.Node
	for i := range 4 {
		n := simnode.Node{Name: fmt.Sprintf("plan-%d", i), Labels: map[string]string{"pool": "plan"}}
		switch i {
		case 2:
			n.Labels["skyhook.nvidia.com/ignore"] = "true"
		case 3:
			n.Taints = []corev1.Taint{{Key: "dedicated", Value: "inference", Effect: corev1.TaintEffectNoSchedule}}
		}
		nodes = append(nodes, n)
	}
	// KWOK plays their kubelets, so they are Ready like real nodes.
	if err := env.CreateNodes(ctx, nodes...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			_ = c.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}})
		}
	})
	file := filepath.Join(t.TempDir(), "skyhook.yaml")
	if err := os.WriteFile(file, []byte(`apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: planned}
spec:
  nodeSelectors: {matchLabels: {pool: plan}}
  interruptionBudget: {count: 1}
  packages:
    driver: {version: 2.0.0, image: ghcr.io/x/driver, interrupt: {type: reboot}}
    tuning: {version: 1.0.0, image: ghcr.io/x/tuning, dependsOn: {driver: 2.0.0}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, withCluster("plan", file)...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "plan.golden", out)
	out, err = run(t, withCluster("plan", file, "-o", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Skyhook string
		Batches []struct {
			Number int
			Nodes  []struct {
				Name      string
				Stages    []string
				Interrupt string
			}
		}
		Blocked []struct{ Name, Message string }
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || plan.Skyhook != "planned" || len(plan.Batches) != 2 || len(plan.Blocked) != 2 ||
		plan.Batches[0].Nodes[0].Interrupt != "reboot" {
		t.Errorf("-o json: %v\n%s", err, out)
	}

	// The same as a NodeWright: the seeds' ignore label does not hold it
	// (NodeWright's is nodewright.nvidia.com/ignore), the taint does.
	nwFile := filepath.Join(t.TempDir(), "nodewright.yaml")
	manifest, _ := os.ReadFile(file)
	nw := strings.NewReplacer("skyhook.nvidia.com/v1alpha1", "nodewright.nvidia.com/v1alpha1", "kind: Skyhook", "kind: NodeWright").Replace(string(manifest))
	if err := os.WriteFile(nwFile, []byte(nw), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, withCluster("plan", nwFile, "-o", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	plan.Blocked, plan.Batches = nil, nil
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan.Batches) != 3 || len(plan.Blocked) != 1 || plan.Blocked[0].Name != "plan-3" {
		t.Errorf("a NodeWright's plan: %v\n%s", err, out)
	}

	nowhere := filepath.Join(t.TempDir(), "nowhere.yaml")
	if err := os.WriteFile(nowhere, []byte(`apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: nowhere}
spec:
  nodeSelectors: {matchLabels: {pool: none}}
  packages:
    tuning: {version: 1.0.0, image: ghcr.io/x/tuning}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, withCluster("plan", nowhere)...); err != nil || !strings.Contains(out, "No node matches the Skyhook's nodeSelectors") {
		t.Errorf("a plan without nodes does not say so: %v\n%s", err, out)
	}
	if out, err := run(t, withCluster("plan", nowhere, "-o", "json")...); err != nil || !strings.Contains(out, `"batches": []`) {
		t.Errorf("a plan without nodes in JSON: %v\n%s", err, out)
	}
}
