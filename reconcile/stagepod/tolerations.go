package stagepod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// DefaultRuntimeRequiredTaint is the runtime-required taint of Skyhooks
// unless the operator is told another:
// skyhook.nvidia.com=runtime-required:NoSchedule.
var DefaultRuntimeRequiredTaint = skyhookv1.Skyhooks.RuntimeRequiredTaint()

// DefaultRuntimeRequiredTaints are the default runtime-required taints of
// every kind: the ones stage pods tolerate and a node done is freed of,
// whichever kind put them there.
func DefaultRuntimeRequiredTaints() []corev1.Taint {
	out := make([]corev1.Taint, len(skyhookv1.RolloutKinds))
	for i, k := range skyhookv1.RolloutKinds {
		out[i] = k.RuntimeRequiredTaint()
	}
	return out
}

// Tolerations let the stage pod onto the nodes the Skyhook works on: its
// own additional tolerations, the runtime-required taints (every
// rollout's pods tolerate them, see reconcile.RuntimeRequired), and a
// cordon (interrupts run on cordoned nodes).
func Tolerations(sk *skyhookv1.Skyhook, runtimeRequired []corev1.Taint) []corev1.Toleration {
	var t []corev1.Toleration
	for _, taint := range runtimeRequired {
		tol := corev1.Toleration{Key: taint.Key, Value: taint.Value, Effect: taint.Effect}
		if taint.Value == "" {
			tol.Operator = corev1.TolerationOpExists
		}
		t = append(t, tol)
	}
	t = append(t, corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	return append(t, sk.Spec.AdditionalTolerations...)
}

// Untolerated returns the node's NoSchedule and NoExecute taints that the
// Skyhook's stage pods do not tolerate. With spec.nodeName set no scheduler
// would stop the pod, so the operator must not place it there.
func Untolerated(sk *skyhookv1.Skyhook, node *corev1.Node, runtimeRequired []corev1.Taint) []corev1.Taint {
	tolerations := Tolerations(sk, runtimeRequired)
	var out []corev1.Taint
	for i := range node.Spec.Taints {
		taint := &node.Spec.Taints[i]
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		tolerated := false
		for j := range tolerations {
			if tolerations[j].ToleratesTaint(klog.Background(), taint, false) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			out = append(out, *taint)
		}
	}
	return out
}
