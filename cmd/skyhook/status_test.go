package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// status reads the package records off the nodes and the compartments and
// attention list off the Skyhook.
func TestStatus(t *testing.T) {
	c := testenv.Client(t, env)
	ctx := context.Background()
	records := []skyhookv1.NodeState{
		{"tuning|1.1.0": {Name: "tuning", Version: "1.1.0", Stage: skyhookv1.StageConfig, State: skyhookv1.StateComplete}},
		{"tuning|1.1.0": {Name: "tuning", Version: "1.1.0", Stage: skyhookv1.StageApply, State: skyhookv1.StateInProgress}},
		{"tuning|1.1.0": {Name: "tuning", Version: "1.1.0", Stage: skyhookv1.StageApply, State: skyhookv1.StateErroring}},
		{},
	}
	for i, rec := range records {
		data, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("status-%d", i), Labels: map[string]string{"pool": "status"},
			Annotations: map[string]string{skyhookv1.NodeStateAnnotation("rollout"): string(data)}}}
		if err := c.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), node) })
	}
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "rollout"}, Spec: skyhookv1.SkyhookSpec{
		NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "status"}},
		Packages:     skyhookv1.Packages{"tuning": {PackageRef: skyhookv1.PackageRef{Version: "1.1.0"}, Image: "ghcr.io/x/tuning"}}}}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	sk.Status.Status, sk.Status.CompleteNodes, sk.Status.NodesInProgress = skyhookv1.StatusErroring, "1/4", 2
	sk.Status.Compartments = []skyhookv1.CompartmentStatus{{Name: "__default__", Nodes: 4, Complete: 1, InProgress: 2, Batch: 2, BatchSize: 2, ConsecutiveFailures: 1}}
	sk.Status.NodesNeedingAttention = []skyhookv1.NodeAttention{{Name: "status-2", Status: skyhookv1.StatusErroring, Message: "package tuning 1.1.0, stage apply: container tuning-apply exited with code 7 (Error)"}}
	conditions.MarkFalse(sk, meta.ReadyCondition, meta.ProgressingReason, "1/4 nodes complete, 2 in progress")
	if err := c.Status().Update(ctx, sk); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, withCluster("status", "rollout")...)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "status.golden", out)

	out, err = run(t, withCluster("status", "rollout", "-o", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var view struct {
		Name, Status, CompleteNodes, Ready, Message string
		NodesInProgress                             int
		Blocking                                    []struct{ Type, Message string }
		Packages                                    []struct {
			Name, Version             string
			Nodes, Complete, Erroring int
			InProgress                map[string]int
		}
		Compartments          []skyhookv1.CompartmentStatus
		NodesNeedingAttention []skyhookv1.NodeAttention
	}
	if err := json.Unmarshal([]byte(out), &view); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	p := view.Packages
	if view.Name != "rollout" || view.Status != "erroring" || view.Ready != "False" || view.NodesInProgress != 2 || view.Blocking == nil ||
		len(p) != 1 || p[0].Nodes != 4 || p[0].Complete != 1 || p[0].Erroring != 1 || p[0].InProgress["apply"] != 1 ||
		len(view.Compartments) != 1 || view.Compartments[0].BatchSize != 2 || len(view.NodesNeedingAttention) != 1 {
		t.Errorf("-o json shape:\n%s", out)
	}
	if _, err := run(t, withCluster("status", "rollout", "-o", "wide")...); err == nil || err.Error() != `invalid output format "wide": skyhook status takes --output table, json, yaml` {
		t.Errorf("-o wide: %v", err)
	}
}
