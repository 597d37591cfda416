package reconcile

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
	total := progress{selected: 4, active: 3, requeue: time.Minute}
	soon := time.Now().Add(time.Hour)
	later := soon.Add(time.Hour)
	var b, a progress
	b.nodeErroring("node-b", "failed")
	b.nodeFinished()
	b.requeueIn(10 * time.Second)
	b.waitsForWindow(later, time.Now())
	a.nodeErroring("node-a", "failed")
	a.nodeBlocked("node-a", "drain timed out")
	a.gaveUp("pkg on node-a")
	a.waitsForWindow(soon, time.Now())
	total.add(b) // the pool adds reports in the order the nodes finished
	total.add(a)
	total.sortByNode()
	if total.active != 2 || total.complete != 1 {
		t.Errorf("counters: active %d complete %d, want 2 and 1", total.active, total.complete)
	}
	if names := []string{total.erroring[0].Name, total.erroring[1].Name}; !slices.Equal(names, []string{"node-a", "node-b"}) {
		t.Errorf("erroring in order %v, want node-a first", names)
	}
	if total.requeue != 10*time.Second {
		t.Errorf("requeue %s, want the soonest, 10s", total.requeue)
	}
	if total.windowWaits != 2 || !total.nextWindow.Equal(soon) {
		t.Errorf("window: %d waits, next %s; want 2 and the sooner opening", total.windowWaits, total.nextWindow)
	}
	if len(total.blocked) != 1 || len(total.stalled) != 1 {
		t.Errorf("blocked %v stalled %v", total.blocked, total.stalled)
	}
}

func TestBehindSummaryCountsNodesPerSkyhookAhead(t *testing.T) {
	var p progress
	if p.behindSummary() != "" {
		t.Fatal("nothing behind: want no summary")
	}
	for _, first := range []string{"runtime", "driver", "runtime"} {
		p.waitBehind(first)
	}
	if got, want := p.behindSummary(), ", 3 waiting for Skyhooks that go first there: driver (1), runtime (2)"; got != want {
		t.Fatalf("behindSummary = %q, want %q", got, want)
	}
}

func testPass() *rolloutPass {
	sk := skyhookWith(map[string]skyhookv1.Package{"b": pkg("2.0.0"), "a": pkg("1.0.0")})
	sk.Generation = 3
	return &rolloutPass{r: &SkyhookReconciler{MaxAttempts: 5}, sk: sk}
}

func TestSummariseWritesStatusAndFluxConditions(t *testing.T) {
	pass := testPass()
	p := progress{selected: 10, complete: 4, active: 2}
	p.waitBehind("driver")
	pass.summarise(p)
	s := pass.sk.Status
	if s.Status != skyhookv1.StatusInProgress || s.CompleteNodes != "4/10" || s.NodesInProgress != 2 || s.PackageList != "a:1.0.0,b:2.0.0" {
		t.Fatalf("in progress: %+v", s)
	}
	if !conditions.IsReconciling(pass.sk) || conditions.IsReady(pass.sk) ||
		conditions.GetMessage(pass.sk, meta.ReadyCondition) != "4/10 nodes complete, 2 in progress, 1 waiting for Skyhooks that go first there: driver (1)" {
		t.Fatalf("in progress conditions: %+v", s.Conditions)
	}

	p = progress{selected: 10, complete: 8, active: 2}
	p.gaveUp("a on node-3")
	pass.summarise(p)
	if pass.sk.Status.Status != skyhookv1.StatusErroring || !conditions.IsStalled(pass.sk) || conditions.IsReconciling(pass.sk) ||
		pass.sk.Status.ObservedGeneration != 3 || conditions.GetReason(pass.sk, meta.ReadyCondition) != "StageFailed" ||
		!strings.Contains(conditions.GetMessage(pass.sk, meta.StalledCondition), "gave up after 5 attempts: [a on node-3]") {
		t.Fatalf("stalled: %+v", pass.sk.Status)
	}

	pass.summarise(progress{selected: 10, complete: 10})
	if pass.sk.Status.Status != skyhookv1.StatusComplete || !conditions.IsReady(pass.sk) || conditions.IsStalled(pass.sk) ||
		conditions.GetMessage(pass.sk, meta.ReadyCondition) != "Applied to 10/10 nodes" {
		t.Fatalf("complete: %+v", pass.sk.Status)
	}
}

func TestSummariseListsEachNodeNeedingAttentionOnce(t *testing.T) {
	pass := testPass()
	p := progress{selected: 100}
	p.nodeErroring("node-1", "package a failed")
	p.nodeErroring("node-1", "package b failed")
	for i := range 60 {
		p.nodeBlocked(fmt.Sprintf("tainted-%02d", i), "taints not tolerated")
	}
	pass.summarise(p)
	attention := pass.sk.Status.NodesNeedingAttention
	if len(attention) != skyhookv1.MaxAttentionNodes || attention[0].Message != "package a failed" || attention[1].Name != "tainted-00" {
		t.Fatalf("nodesNeedingAttention: %d entries, first %+v %+v", len(attention), attention[0], attention[1])
	}
	msg := conditions.GetMessage(pass.sk, skyhookv1.NodesBlockedCondition)
	if !strings.HasPrefix(msg, "60 nodes blocked: tainted-00 (taints not tolerated);") || !strings.HasSuffix(msg, " and 50 more") {
		t.Fatalf("NodesBlocked: %q", msg)
	}
}

func TestReportPolicyHaltsWithConditionAndClearsIt(t *testing.T) {
	pass := testPass()
	pass.reportPolicy(policyOutcome{compartments: []skyhookv1.CompartmentStatus{{Name: "canary", Halted: true}},
		halted: []string{"canary (2 failed batches in a row)"}, policy: "gpu", stopped: true})
	if !conditions.IsTrue(pass.sk, skyhookv1.RolloutHaltedCondition) || len(pass.sk.Status.Compartments) != 1 ||
		!strings.Contains(conditions.GetMessage(pass.sk, skyhookv1.RolloutHaltedCondition), "compartment [canary (2 failed batches in a row)]: the failureThreshold of policy gpu") {
		t.Fatalf("halted: %+v", pass.sk.Status)
	}
	pass.summarise(progress{selected: 3, complete: 1, halted: true})
	if pass.sk.Status.Status != skyhookv1.StatusErroring || conditions.GetReason(pass.sk, meta.StalledCondition) != "RolloutHalted" {
		t.Fatalf("halted summary: %+v", pass.sk.Status)
	}
	pass.reportPolicy(policyOutcome{})
	if conditions.Has(pass.sk, skyhookv1.RolloutHaltedCondition) || pass.sk.Status.Compartments != nil {
		t.Fatalf("no policy: %+v", pass.sk.Status)
	}
}
