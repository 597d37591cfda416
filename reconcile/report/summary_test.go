package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func TestProgressAddsNodeReportsInNodeOrder(t *testing.T) {
	total := Progress{Selected: 4, Active: 3, Requeue: time.Minute}
	soon := time.Now().Add(time.Hour)
	later := soon.Add(time.Hour)
	var b, a Progress
	b.NodeErroring("node-b", "failed")
	b.NodeFinished()
	b.RequeueIn(10 * time.Second)
	b.WaitsForWindow(later, time.Now())
	a.NodeErroring("node-a", "failed")
	a.NodeBlocked("node-a", "drain timed out")
	a.GaveUp("pkg on node-a")
	a.WaitsForWindow(soon, time.Now())
	total.Add(b) // the pool adds reports in the order the nodes finished
	total.Add(a)
	total.SortByNode()
	if total.Active != 2 || total.Complete != 1 {
		t.Errorf("counters: active %d complete %d, want 2 and 1", total.Active, total.Complete)
	}
	if names := []string{total.Erroring[0].Name, total.Erroring[1].Name}; !slices.Equal(names, []string{"node-a", "node-b"}) {
		t.Errorf("erroring in order %v, want node-a first", names)
	}
	if total.Requeue != 10*time.Second {
		t.Errorf("requeue %s, want the soonest, 10s", total.Requeue)
	}
	if total.WindowWaits != 2 || !total.NextWindow.Equal(soon) {
		t.Errorf("window: %d waits, next %s; want 2 and the sooner opening", total.WindowWaits, total.NextWindow)
	}
	if len(total.Blocked) != 1 || len(total.Stalled) != 1 {
		t.Errorf("blocked %v stalled %v", total.Blocked, total.Stalled)
	}
}

func TestBehindSummaryCountsNodesPerSkyhookAhead(t *testing.T) {
	var p Progress
	if p.behindSummary() != "" {
		t.Fatal("nothing behind: want no summary")
	}
	for _, first := range []string{"runtime", "driver", "runtime"} {
		p.WaitBehind(first)
	}
	if got, want := p.behindSummary(), ", 3 waiting for Skyhooks that go first there: driver (1), runtime (2)"; got != want {
		t.Fatalf("behindSummary = %q, want %q", got, want)
	}
}

func testSkyhook() *skyhookv1.Skyhook {
	pkg := func(version string) skyhookv1.Package {
		return skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Version: version}, Image: "ghcr.io/x/pkg"}
	}
	sk := &skyhookv1.Skyhook{}
	sk.Name, sk.Generation = "sk", 3
	sk.Spec.Packages = skyhookv1.Packages{"b": pkg("2.0.0"), "a": pkg("1.0.0")}
	return sk
}

var rollout = Rollout{MaxAttempts: 4}

func TestSummariseWritesStatusAndFluxConditions(t *testing.T) {
	sk := testSkyhook()
	p := Progress{Selected: 10, Complete: 4, Active: 2}
	p.WaitBehind("driver")
	Summarise(sk, p, rollout)
	s := sk.Status
	if s.Status != skyhookv1.StatusInProgress || s.CompleteNodes != "4/10" || s.NodesInProgress != 2 || s.PackageList != "a:1.0.0,b:2.0.0" {
		t.Fatalf("in progress: %+v", s)
	}
	if !conditions.IsReconciling(sk) || conditions.IsReady(sk) ||
		conditions.GetMessage(sk, meta.ReadyCondition) != "4/10 nodes complete, 2 in progress, 1 waiting for Skyhooks that go first there: driver (1)" {
		t.Fatalf("in progress conditions: %+v", s.Conditions)
	}

	p = Progress{Selected: 10, Complete: 8, Active: 2}
	p.GaveUp("a on node-3")
	Summarise(sk, p, rollout)
	if sk.Status.Status != skyhookv1.StatusErroring || !conditions.IsStalled(sk) || conditions.IsReconciling(sk) ||
		sk.Status.ObservedGeneration != 3 || conditions.GetReason(sk, meta.ReadyCondition) != "StageFailed" ||
		!strings.Contains(conditions.GetMessage(sk, meta.StalledCondition), "gave up after 4 attempts: [a on node-3]") {
		t.Fatalf("stalled: %+v", sk.Status)
	}

	Summarise(sk, Progress{Selected: 10, Complete: 10}, rollout)
	if sk.Status.Status != skyhookv1.StatusComplete || !conditions.IsReady(sk) || conditions.IsStalled(sk) ||
		conditions.GetMessage(sk, meta.ReadyCondition) != "Applied to 10/10 nodes" {
		t.Fatalf("complete: %+v", sk.Status)
	}
}

func TestSummariseListsEachNodeNeedingAttentionOnce(t *testing.T) {
	sk := testSkyhook()
	p := Progress{Selected: 100}
	p.NodeErroring("node-1", "package a failed")
	p.NodeErroring("node-1", "package b failed")
	for i := range 60 {
		p.NodeBlocked(fmt.Sprintf("tainted-%02d", i), "taints not tolerated")
	}
	Summarise(sk, p, rollout)
	attention := sk.Status.NodesNeedingAttention
	if len(attention) != skyhookv1.MaxAttentionNodes || attention[0].Message != "package a failed" || attention[1].Name != "tainted-00" {
		t.Fatalf("nodesNeedingAttention: %d entries, first %+v %+v", len(attention), attention[0], attention[1])
	}
	msg := conditions.GetMessage(sk, skyhookv1.NodesBlockedCondition)
	if !strings.HasPrefix(msg, "60 nodes blocked: tainted-00 (taints not tolerated);") || !strings.HasSuffix(msg, " and 50 more") {
		t.Fatalf("NodesBlocked: %q", msg)
	}
}

func TestReportPolicyHaltsWithConditionAndClearsIt(t *testing.T) {
	sk := testSkyhook()
	Policy(sk, PolicyOutcome{Compartments: []skyhookv1.CompartmentStatus{{Name: "canary", Halted: true}},
		Halted: []string{"canary (2 failed batches in a row)"}, Policy: "gpu", Stopped: true})
	if !conditions.IsTrue(sk, skyhookv1.RolloutHaltedCondition) || len(sk.Status.Compartments) != 1 ||
		!strings.Contains(conditions.GetMessage(sk, skyhookv1.RolloutHaltedCondition), "compartment [canary (2 failed batches in a row)]: the failureThreshold of policy gpu") {
		t.Fatalf("halted: %+v", sk.Status)
	}
	Summarise(sk, Progress{Selected: 3, Complete: 1, Halted: true}, rollout)
	if sk.Status.Status != skyhookv1.StatusErroring || conditions.GetReason(sk, meta.StalledCondition) != "RolloutHalted" {
		t.Fatalf("halted summary: %+v", sk.Status)
	}
	Policy(sk, PolicyOutcome{})
	if conditions.Has(sk, skyhookv1.RolloutHaltedCondition) || sk.Status.Compartments != nil {
		t.Fatalf("no policy: %+v", sk.Status)
	}
}

// NodeWright's mirrored conditions go under the prefix of the rollout's
// kind, and the reconciler owns those.
func TestNodeWrightsConditionsAreUnderItsPrefix(t *testing.T) {
	nw := testSkyhook()
	nw.APIVersion, nw.Kind = "nodewright.nvidia.com/v1alpha1", "NodeWright"
	Summarise(nw, Progress{Selected: 2, Complete: 2}, rollout)
	for _, want := range []string{"nodewright.nvidia.com/Ready", "nodewright.nvidia.com/Transition", "nodewright.nvidia.com/NodesIgnored", "Ready", "NodesIgnored"} {
		if !conditions.Has(nw, want) {
			t.Errorf("no %s condition", want)
		}
	}
	if conditions.Has(nw, "skyhook.nvidia.com/Ready") {
		t.Error("a NodeWright has the Skyhook's prefixed Ready")
	}
	owned := OwnedConditions(skyhookv1.NodeWrights)
	if !slices.Contains(owned, "nodewright.nvidia.com/Ready") || slices.Contains(owned, "skyhook.nvidia.com/Ready") || !slices.Contains(OwnedConditions(skyhookv1.Skyhooks), "skyhook.nvidia.com/Ready") {
		t.Errorf("owned conditions %v", owned)
	}
}

// A failed try that is tried again keeps the rollout in progress (NodeWright
// v0.20): the node is listed as needing attention, in progress, with what
// failed; a node whose stage failed for good makes the rollout erroring.
func TestARetriedFailureKeepsTheRolloutInProgress(t *testing.T) {
	sk := testSkyhook()
	p := Progress{Selected: 3, Complete: 1, Active: 2}
	p.NodeRetrying("node-2", "attempt 1 of 4 failed, tried again: exit 7")
	Summarise(sk, p, rollout)
	if sk.Status.Status != skyhookv1.StatusInProgress || len(sk.Status.NodesNeedingAttention) != 1 ||
		sk.Status.NodesNeedingAttention[0].Status != skyhookv1.StatusInProgress || !conditions.IsReconciling(sk) {
		t.Fatalf("retrying: %+v", sk.Status)
	}
	p.NodeErroring("node-3", "stage apply: exit 7")
	Summarise(sk, p, rollout)
	if sk.Status.Status != skyhookv1.StatusErroring || len(sk.Status.NodesNeedingAttention) != 2 || sk.Status.NodesNeedingAttention[0].Name != "node-3" {
		t.Fatalf("erroring first: %+v", sk.Status)
	}
}
