package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Interrupts in the status: the drains that wait on pods, the nodes
// waiting for the interrupt window.

// reportDrains sets the DrainBlocked condition naming the nodes whose
// interrupt waits and the pods that hold them, and lists those nodes among
// the ones needing attention.
func reportDrains(sk *skyhookv1.Skyhook, reports []DrainWait) {
	if len(reports) == 0 {
		conditions.Delete(sk, skyhookv1.DrainBlockedCondition)
		return
	}
	parts := make([]string, 0, min(len(reports), 10))
	for _, rep := range reports {
		var pods []string
		for _, b := range rep.Blockers {
			pods = append(pods, b.Pod+" ("+b.Reason+")")
		}
		msg := "evicted pods still terminating"
		if len(pods) > 0 {
			msg = strings.Join(pods, ", ")
		}
		sk.Status.NodesNeedingAttention = append(sk.Status.NodesNeedingAttention, skyhookv1.NodeAttention{
			Name: rep.Node, Status: skyhookv1.StatusBlocked, Message: "interrupt waits: " + msg})
		if len(parts) < 10 {
			parts = append(parts, rep.Node+": "+msg)
		}
	}
	more := ""
	if len(reports) > 10 {
		more = fmt.Sprintf(" and %d more nodes", len(reports)-10)
	}
	conditions.MarkTrue(sk, skyhookv1.DrainBlockedCondition, "DrainBlocked", "%d nodes wait to be drained: %s%s", len(reports), strings.Join(parts, "; "), more)
}

// reportWindow sets the InterruptWindowClosed condition while nodes wait
// for the window, saying when it opens.
func reportWindow(sk *skyhookv1.Skyhook, waits int, next time.Time) {
	if waits == 0 {
		conditions.Delete(sk, skyhookv1.InterruptWindowClosedCondition)
		return
	}
	conditions.MarkTrue(sk, skyhookv1.InterruptWindowClosedCondition, "OutsideInterruptWindow",
		"%d nodes wait for the interrupt window of policy %s, which opens next at %s", waits, sk.Spec.DeploymentPolicy, next.UTC().Format(time.RFC3339))
}
