package report

import (
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func TestAnnouncementsSayWhatChanged(t *testing.T) {
	before := testSkyhook()
	before.Status.Status = skyhookv1.StatusInProgress
	after := before.DeepCopy()
	if got := Announcements(before, after); len(got) != 0 {
		t.Fatalf("nothing changed, announced %+v", got)
	}
	after.Status.Status = skyhookv1.StatusErroring
	after.Status.NodesNeedingAttention = []skyhookv1.NodeAttention{{Name: "node-1", Message: "package a failed"}}
	if got := Announcements(before, after); len(got) != 1 || got[0].Reason != "StageFailed" || got[0].Type != "Warning" || got[0].Note != "node-1: package a failed" {
		t.Fatalf("a stage failed: %+v", got)
	}
	conditions.MarkStalled(after, "StageFailed", "gave up")
	if got := Announcements(before, after); len(got) != 1 || got[0].Reason != "Stalled" || got[0].Note != "gave up; node-1: package a failed" {
		t.Fatalf("stalled: %+v", got)
	}
	done := before.DeepCopy()
	done.Status.Status = skyhookv1.StatusComplete
	conditions.MarkTrue(done, meta.ReadyCondition, skyhookv1.NodesConvergedReason, "Applied to 2/2 nodes")
	if got := Announcements(before, done); len(got) != 1 || got[0].Reason != "Complete" || got[0].Type != "Normal" || got[0].Note != "Applied to 2/2 nodes" {
		t.Fatalf("complete: %+v", got)
	}
}

// A drain held announces itself whenever its message says something new,
// not on every reconcile.
func TestAnnouncementsWarnOfANewDrainBlock(t *testing.T) {
	before := testSkyhook()
	after := before.DeepCopy()
	conditions.MarkTrue(after, skyhookv1.DrainBlockedCondition, "DrainBlocked", "1 nodes wait to be drained: n: p (PodDisruptionBudget)")
	got := Announcements(before, after)
	if len(got) != 1 || got[0].Reason != skyhookv1.DrainBlockedCondition || got[0].Action != "Drain" {
		t.Fatalf("a new drain block: %+v", got)
	}
	if again := Announcements(after, after.DeepCopy()); len(again) != 0 {
		t.Fatalf("the same drain block again: %+v", again)
	}
}
