package stagepod

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// OwnerLabel labels the stage pods of the kind's rollouts with the
// rollout's name.
func OwnerLabel(kind skyhookv1.RolloutKind) string { return kind.OwnerLabel() }

// labels are the pod's labels: the owner's, this operator's bookkeeping,
// and NodeWright's under the kind's prefix.
func (s Spec) labels(kind skyhookv1.RolloutKind) map[string]string {
	labels := map[string]string{kind.OwnerLabel(): s.Skyhook.Name, PackageNameLabel: s.Package, StageLabel: string(s.Stage)}
	maps.Copy(labels, s.nodeWrightLabels(kind))
	return labels
}

// nodeWrightLabels are the labels NodeWright puts on its stage pods, under
// the kind's prefix: name, package (<package>-<version>), stage, node, and
// interrupt "True" on an interrupt's pod.
func (s Spec) nodeWrightLabels(kind skyhookv1.RolloutKind) map[string]string {
	labels := map[string]string{
		kind.Prefix + "/name":    s.Skyhook.Name,
		kind.Prefix + "/package": LabelValue(s.Package + "-" + s.Version),
		kind.Prefix + "/stage":   string(s.Stage),
		kind.Prefix + "/node":    LabelValue(s.Node),
	}
	if agentMode(s.Stage) == string(skyhookv1.StageInterrupt) {
		labels[kind.Prefix+"/interrupt"] = "True"
	}
	return labels
}

// LabelValue is v when it is a valid label value; otherwise (longer than
// 63 characters, as a node name may be, or holding a character a label
// value cannot, as a version's '+' build metadata) its valid characters
// cut to 54 and a hash of v, so two values never share one.
func LabelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	clean := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, v)
	if len(clean) > 54 {
		clean = clean[:54]
	}
	sum := sha256.Sum256([]byte(v))
	return strings.Trim(clean, "-_.") + "-" + hex.EncodeToString(sum[:4])
}

// PackageOf is the name of the package the stage pod runs: its
// PackageNameLabel, or on a pod of this operator's releases before that
// label, the bare name they kept in PackageLabel.
func PackageOf(pod *corev1.Pod) string {
	if name, ok := pod.Labels[PackageNameLabel]; ok {
		return name
	}
	return pod.Labels[PackageLabel]
}

// Adopt makes a stage pod of to's twin (the same rollout under the other
// kind) to's own, in place: its owner labels and controller reference name
// to, so that to's passes find it and read its outcome, and the pod is not
// garbage collected when the twin is deleted mid-stage. It reports whether
// it changed the pod.
func Adopt(pod *corev1.Pod, to *skyhookv1.Skyhook) bool {
	kind := skyhookv1.KindOf(to)
	owner := metav1.NewControllerRef(to, kind.GroupVersionKind)
	if current := metav1.GetControllerOf(pod); current != nil && current.UID == owner.UID {
		return false
	}
	for _, other := range skyhookv1.RolloutKinds {
		delete(pod.Labels, other.OwnerLabel())
		delete(pod.Labels, other.Prefix+"/name")
	}
	pod.Labels[kind.OwnerLabel()] = to.Name
	pod.Labels[kind.Prefix+"/name"] = to.Name
	// NodeWright's labels under the new kind's prefix too; the old kind's
	// stay (a Skyhook's are this operator's bookkeeping keys as well).
	if pkg := PackageOf(pod); pkg != "" {
		pod.Labels[PackageNameLabel] = pkg
		was := Spec{Skyhook: to, Package: pkg, Version: pod.Annotations[VersionAnnotation], Stage: skyhookv1.Stage(pod.Labels[StageLabel]), Node: pod.Spec.NodeName}
		maps.Copy(pod.Labels, was.nodeWrightLabels(kind))
	}
	pod.OwnerReferences = []metav1.OwnerReference{*owner}
	return true
}
