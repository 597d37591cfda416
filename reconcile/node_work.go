package reconcile

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/fleet"
	"github.com/skyhook-go/skyhook/reconcile/report"
)

// What the passes know of one node, kept in the Skyhook's view between
// passes (fleet_view.go) as a stand-in without the cached node (stub).

// nodeWork is one selected node and what this Skyhook has on it.
type nodeWork struct {
	node *corev1.Node
	// state is the record as the cache shows it (the last one observed).
	state skyhookv1.NodeState
	// pods are the node's stage pods by package name.
	pods map[string][]*corev1.Pod
	// leaving are the node's stage pods being deleted, by package name.
	leaving map[string][]*corev1.Pod
	// config are the configMap hashes the config stages last ran with.
	config map[string]string
	// batch is the DeploymentPolicy batch the node last started in.
	batch int32
	// now is where the node stands in this pass: complete, in_progress,
	// erroring, or waiting to start.
	now skyhookv1.Status
	// written is the record the node's turn wrote in this pass, nil when
	// it had no turn (state is then current).
	written skyhookv1.NodeState
	// order is the node's place in the rollout (SKYHOOK_NODE_ORDER, see
	// orderNodes).
	order int
	// kind says how the node counts: work, or held (ignored, malformed).
	kind fleet.Kind
	// compartment is the node's compartment of the DeploymentPolicy.
	compartment string
	// report is what the node contributes to the status in this pass (and
	// keeps contributing until its next visit).
	report report.Progress
	// finishing: the pass deletes stage pods of the node whose stage is
	// recorded done (they are gone from pods, not yet leaving).
	finishing bool
	// holding: the node's work is done, its stage pods are not gone yet;
	// it keeps its budget slot (see hasPods).
	holding bool
	// stubbed: node is a stand-in (see stub); refresh reads the node.
	stubbed bool
	// problem says why a malformed node's record cannot be read.
	problem string
	// mark is why a waiting node did not start, for its status label:
	// waiting (behind another Skyhook); empty when it only waits for the
	// budget. (A node with taints the Skyhook does not tolerate is
	// blocked: now says so.)
	mark skyhookv1.Status
}

// restart readies a node known from an earlier pass for a turn in this
// one: its record is the last one it had.
func (w *nodeWork) restart() {
	w.state, w.written, w.report, w.holding = w.record(), nil, report.Progress{}, false
}

// stub replaces the node by a stand-in that keeps its name, UID and boot
// ID, for the view to keep between passes: the cached node it points to
// would stay alive beside the cache's newer copies (heartbeats replace
// every node every few minutes), doubling the memory of the fleet.
func (w *nodeWork) stub() {
	if w.stubbed {
		return
	}
	w.node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.node.Name, UID: w.node.UID},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{BootID: w.node.Status.NodeInfo.BootID}}}
	w.stubbed = true
}

// hasPods reports whether a stage pod of the Skyhook still exists on the
// node: running, finished, or being deleted. Until none does, the node
// holds its budget slot, so that the nodes with a live stage pod (a pause
// container included) never outnumber the budget.
func (w *nodeWork) hasPods() bool {
	if w.finishing {
		return true
	}
	for _, byPackage := range []map[string][]*corev1.Pod{w.pods, w.leaving} {
		for _, pods := range byPackage {
			if len(pods) > 0 {
				return true
			}
		}
	}
	return false
}

// record is the node's record as of the end of the pass.
func (w *nodeWork) record() skyhookv1.NodeState {
	if w.written != nil {
		return w.written
	}
	return w.state
}
