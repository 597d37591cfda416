package report

import (
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Event is an event to record on the Skyhook.
type Event struct {
	Type, Reason, Action, Note string
}

// warningConditions are the conditions a Warning event of the same reason
// announces whenever they say something new while True, as NodeWright
// warns of them: a drain held, a deletion held (a paused or disabled
// Skyhook with uninstalls pending, or a record that cannot be read).
var warningConditions = []struct{ condition, action string }{
	{skyhookv1.DrainBlockedCondition, "Drain"},
	{skyhookv1.DeletionBlockedCondition, "Delete"},
}

// Announcements are the events a reconcile that took the Skyhook from
// before to after announces: a Warning when one of warningConditions says
// something new, and one when the summary status changed (the rollout
// started, completed, a stage failed, it stalled, it was paused or
// disabled).
func Announcements(before, after *skyhookv1.Skyhook) []Event {
	var out []Event
	for _, w := range warningConditions {
		msg := conditions.GetMessage(after, w.condition)
		if conditions.IsTrue(after, w.condition) && msg != conditions.GetMessage(before, w.condition) {
			out = append(out, Event{Type: corev1.EventTypeWarning, Reason: w.condition, Action: w.action, Note: msg})
		}
	}
	if before.Status.Status == after.Status.Status || after.Status.Status == "" {
		return out
	}
	e := Event{Type: corev1.EventTypeNormal, Reason: "Progressing", Action: "Rollout", Note: conditions.GetMessage(after, meta.ReadyCondition)}
	switch after.Status.Status {
	case skyhookv1.StatusComplete:
		e.Reason = "Complete"
	case skyhookv1.StatusErroring:
		e.Type, e.Reason = corev1.EventTypeWarning, "StageFailed"
		if conditions.IsStalled(after) {
			e.Reason, e.Note = "Stalled", conditions.GetMessage(after, meta.StalledCondition)
		}
		if len(after.Status.NodesNeedingAttention) > 0 { // what failed, and where its logs are
			first := after.Status.NodesNeedingAttention[0]
			e.Note = strings.TrimPrefix(e.Note+"; ", "; ") + first.Name + ": " + first.Message
		}
	case skyhookv1.StatusPaused, skyhookv1.StatusDisabled:
		e.Reason = string(after.Status.Status)
	}
	return append(out, e)
}
