package report

import (
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// The condition types NodeWright writes beside its Ready condition, bare and
// prefixed with skyhook.nvidia.com/ (its older releases wrote only the
// prefixed ones), so that its readers find them here.

// upstreamConditionTypes are the types mirrorConditions owns on an object
// of the kind: NodeWright's, bare and under the kind's prefix.
func upstreamConditionTypes(kind skyhookv1.RolloutKind) []string {
	var out []string
	for _, t := range []string{skyhookv1.TaintNotTolerableCondition, skyhookv1.NodesIgnoredCondition, skyhookv1.ApplyPackageCondition} {
		out = append(out, t, prefixed(kind, t))
	}
	return append(out, prefixed(kind, "Ready"), prefixed(kind, "Transition"))
}

// prefixed is the condition type under the kind's prefix, as NodeWright
// mirrors its conditions: skyhook.nvidia.com/Ready, nodewright.nvidia.com/Ready.
func prefixed(kind skyhookv1.RolloutKind, t string) string { return kind.Prefix + "/" + t }

// readyReason is NodeWright's reason of its Ready condition for a status.
func readyReason(s skyhookv1.Status) string {
	switch s {
	case skyhookv1.StatusComplete:
		return skyhookv1.NodesConvergedReason
	case skyhookv1.StatusInProgress:
		return meta.ProgressingReason
	case skyhookv1.StatusBlocked:
		return "Blocked"
	case skyhookv1.StatusErroring:
		return "Erroring"
	case skyhookv1.StatusPaused:
		return "Paused"
	case skyhookv1.StatusWaiting:
		return "Waiting"
	case skyhookv1.StatusDisabled:
		return "Disabled"
	}
	return "Unknown"
}

// mirrorReady writes skyhook.nvidia.com/Ready (the Ready condition with
// NodeWright's reason for the status) and skyhook.nvidia.com/Transition.
func mirrorReady(sk *skyhookv1.Skyhook) {
	ready := conditions.Get(sk, meta.ReadyCondition)
	if ready == nil {
		return
	}
	status, msg := ready.Status, ready.Message
	kind := skyhookv1.KindOf(sk)
	set(sk, prefixed(kind, "Ready"), status, readyReason(sk.Status.Status), msg)
	set(sk, prefixed(kind, "Transition"), metav1.ConditionTrue, string(sk.Status.Status), msg)
}

// mirrorNodeConditions writes TaintNotTolerable, NodesIgnored and
// ApplyPackage, bare and prefixed, with NodeWright's reasons and messages.
func mirrorNodeConditions(sk *skyhookv1.Skyhook, p Progress) {
	if len(p.Untolerated) == 0 {
		setBoth(sk, skyhookv1.TaintNotTolerableCondition, metav1.ConditionFalse, "All nodes have tolerable taints.")
	} else {
		setBoth(sk, skyhookv1.TaintNotTolerableCondition, metav1.ConditionTrue, fmt.Sprintf("Node(s) have taints that are not tolerated: %s", NodeList(p.Untolerated)))
	}
	if p.Ignored == 0 {
		setBoth(sk, skyhookv1.NodesIgnoredCondition, metav1.ConditionFalse, "No nodes have ignore label set.")
	} else {
		setBoth(sk, skyhookv1.NodesIgnoredCondition, metav1.ConditionTrue, fmt.Sprintf("%d nodes have the ignore label set (%s=true).", p.Ignored, skyhookv1.KindOf(sk).IgnoreNodeLabel()))
	}
	if p.Applying != "" {
		setBoth(sk, skyhookv1.ApplyPackageCondition, metav1.ConditionTrue, p.Applying)
	}
	reportMalformed(sk, p.Malformed)
}

// reportMalformed sets NodeStateMalformed while selected nodes hold a
// record of the Skyhook that cannot be read, with NodeWright's reason and
// message (node names past 10 characters cut to 10 and "..."); it goes
// once every record reads again.
func reportMalformed(sk *skyhookv1.Skyhook, malformed []skyhookv1.NodeAttention) {
	if len(malformed) == 0 {
		conditions.Delete(sk, skyhookv1.NodeStateMalformedCondition)
		return
	}
	names := make([]string, len(malformed))
	for i, n := range malformed {
		names[i] = n.Name
		if len(n.Name) > 10 {
			names[i] = n.Name[:10] + "..."
		}
	}
	conditions.MarkTrue(sk, skyhookv1.NodeStateMalformedCondition, "ParseError",
		"nodeState annotation cannot be parsed on %d node(s): %s", len(malformed), strings.Join(names, ", "))
}

// setBoth sets a condition of NodeWright's under its bare and its prefixed
// type, with the type as its reason, as NodeWright does.
func setBoth(sk *skyhookv1.Skyhook, t string, status metav1.ConditionStatus, msg string) {
	set(sk, t, status, t, msg)
	set(sk, prefixed(skyhookv1.KindOf(sk), t), status, t, msg)
}

func set(sk *skyhookv1.Skyhook, t string, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(sk, &metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: sk.Generation})
}
