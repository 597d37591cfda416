package report

import (
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// The node conditions NodeWright writes per Skyhook, with its types,
// reasons and messages, so tooling that reads node conditions (node
// problem dashboards, `kubectl describe node`) sees this operator's nodes
// as it saw NodeWright's: skyhook.nvidia.com/<skyhook>/NotReady and
// .../Erroring. They are written only when their status or reason changes
// (twice per node and rollout: started, complete), as a strategic merge
// patch of the node's status, which merges conditions by type and leaves
// the kubelet's alone.

func notReadyType(rollout skyhookv1.RolloutRef) corev1.NodeConditionType {
	return corev1.NodeConditionType(rollout.NodeConditionType("NotReady"))
}

func erroringType(rollout skyhookv1.RolloutRef) corev1.NodeConditionType {
	return corev1.NodeConditionType(rollout.NodeConditionType("Erroring"))
}

// NodeConditions are the rollout's conditions for a node in the status,
// with the record; their messages name the rollout's kind ("Skyhook demo
// Ready", "NodeWright demo Ready").
func NodeConditions(rollout skyhookv1.RolloutRef, status skyhookv1.Status, state skyhookv1.NodeState) []corev1.NodeCondition {
	skyhook := rollout.Name
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	notReady := corev1.NodeCondition{Type: notReadyType(rollout), Status: corev1.ConditionTrue, Reason: "Incomplete",
		Message: rollout.Kind.Kind + " " + skyhook + " Ready", LastHeartbeatTime: now, LastTransitionTime: now}
	if status == skyhookv1.StatusComplete {
		notReady.Status, notReady.Reason = corev1.ConditionFalse, "Complete"
	}
	erroring := corev1.NodeCondition{Type: erroringType(rollout), Status: corev1.ConditionFalse, Reason: "Not Erroring",
		Message: "Package Erroring or Unknown for " + skyhook, LastHeartbeatTime: now, LastTransitionTime: now}
	for _, e := range state {
		if e.State == skyhookv1.StateErroring || e.State == skyhookv1.StateUnknown {
			erroring.Status, erroring.Reason = corev1.ConditionTrue, "Package(s) Erroring or Unknown"
		}
	}
	return []corev1.NodeCondition{notReady, erroring}
}

// ConditionsPatch is the strategic merge patch that brings the node's
// conditions of the Skyhook to want, or nil when they say that already.
func ConditionsPatch(node *corev1.Node, want []corev1.NodeCondition) ([]byte, error) {
	var changed []corev1.NodeCondition
	for _, w := range want {
		if have := findCondition(node, w.Type); have == nil || have.Status != w.Status || have.Reason != w.Reason {
			changed = append(changed, w)
		}
	}
	if len(changed) == 0 {
		return nil, nil
	}
	return json.Marshal(map[string]any{"status": map[string]any{"conditions": changed}})
}

func findCondition(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// ConditionSummary is what of the conditions counts for a write: their
// statuses and reasons.
func ConditionSummary(cs []corev1.NodeCondition) string {
	s := ""
	for _, c := range cs {
		s += string(c.Status) + "/" + c.Reason + ";"
	}
	return s
}

// ForgetConditionsPatch is the strategic merge patch that removes the
// Skyhook's conditions from the node, or nil when it has none.
func ForgetConditionsPatch(node *corev1.Node, rollout skyhookv1.RolloutRef) ([]byte, error) {
	var gone []map[string]any
	for _, t := range []corev1.NodeConditionType{notReadyType(rollout), erroringType(rollout)} {
		if findCondition(node, t) != nil {
			gone = append(gone, map[string]any{"type": t, "$patch": "delete"})
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	return json.Marshal(map[string]any{"status": map[string]any{"conditions": gone}})
}
