package reconcile

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// judgeBoot: a reboot is a boot ID other than the acknowledged one (the
// bootID_ annotation, else NodeWright's status.nodeBootIds), on a node with
// a record and no interrupt of the rollout under way.
func TestJudgeBoot(t *testing.T) {
	ref := skyhookv1.NodeWrights.Named("gpu")
	node := func(boot string, annotations ...string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{}},
			Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{BootID: boot}}}
		for i := 0; i+1 < len(annotations); i += 2 {
			n.Annotations[annotations[i]] = annotations[i+1]
		}
		return n
	}
	record, ack, interrupt := ref.NodeStateAnnotation(), ref.BootIDAnnotation(), ref.InterruptAnnotation()
	for _, c := range []struct {
		name   string
		node   *corev1.Node
		status map[string]string
		want   rebootVerdict
	}{
		{"acknowledged", node("b", record, "{}", ack, "b"), nil, bootAcknowledged},
		{"rebooted", node("b2", record, "{}", ack, "b"), nil, bootRebooted},
		{"rebooted during the rollout's own interrupt", node("b2", record, "{}", ack, "b", interrupt, "{}"), nil, bootAcknowledged},
		{"no record: a new node", node("b2", ack, "b"), nil, bootAcknowledged},
		{"no boot ID reported", node("", record, "{}", ack, "b"), nil, bootAcknowledged},
		{"never acknowledged", node("b", record, "{}"), nil, bootUnknown},
		{"NodeWright's status says the same boot", node("b", record, "{}"), map[string]string{"n1": "b"}, bootUnknown},
		{"NodeWright's status says another boot", node("b2", record, "{}"), map[string]string{"n1": "b"}, bootRebooted},
		{"the annotation wins over the status", node("b2", record, "{}", ack, "b2"), map[string]string{"n1": "b"}, bootAcknowledged},
		{"another kind's acknowledgement does not count", node("b2", record, "{}", skyhookv1.Skyhooks.Named("gpu").BootIDAnnotation(), "b2"), nil, bootUnknown},
	} {
		if got := judgeBoot(c.node, ref, c.status); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
