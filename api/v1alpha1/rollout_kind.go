package v1alpha1

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RolloutKind is a kind of object the operator rolls packages out for: the
// seeds' Skyhook or NodeWright's NodeWright. One rollout engine serves both;
// what differs between them is a parameter of the rollout, taken from
// here: the kind, the prefix of every key the rollout writes on nodes, its
// object and its stage pods, the finalizer, the pause and disable
// annotations. Their spec and status are the same types (SkyhookSpec,
// SkyhookStatus).
//
// +kubebuilder:object:generate=false
type RolloutKind struct {
	schema.GroupVersionKind
	// Prefix of every label, annotation, condition and taint key of the
	// kind's rollouts: the group's name.
	Prefix string
	// Finalizer the operator keeps on the kind's objects until their
	// packages are uninstalled and their records leave the nodes.
	Finalizer string
	// Plural is the kind's resource name.
	Plural string
}

// NodeWrightGroup is the group of NodeWright's kinds (its v0.18 renamed
// skyhook.nvidia.com to it); api/nodewright/v1alpha1 serves it.
const NodeWrightGroup = "nodewright.nvidia.com"

var (
	// Skyhooks is the kind of the seeds' Skyhooks: keys under
	// skyhook.nvidia.com/ and the finalizer skyhook.nvidia.com/skyhook.
	Skyhooks = RolloutKind{GroupVersionKind: GroupVersion.WithKind(SkyhookKind), Prefix: MetadataPrefix,
		Finalizer: MetadataPrefix + "/skyhook", Plural: "skyhooks"}
	// NodeWrights is the kind of NodeWright's NodeWrights: keys under
	// nodewright.nvidia.com/ and the finalizer
	// nodewright.nvidia.com/nodewright, as NodeWright v0.20 writes them.
	NodeWrights = RolloutKind{GroupVersionKind: schema.GroupVersionKind{Group: NodeWrightGroup, Version: "v1alpha1", Kind: "NodeWright"},
		Prefix: NodeWrightGroup, Finalizer: NodeWrightGroup + "/nodewright", Plural: "nodewrights"}

	// RolloutKinds are the kinds the operator rolls out, the seeds' first.
	RolloutKinds = []RolloutKind{Skyhooks, NodeWrights}
)

// KindOf is the kind of the rollout object sk stands for: NodeWrights when
// its apiVersion is NodeWright's group (the view of a NodeWright the
// reconciler works on, see NodeWrightView), Skyhooks otherwise (a Skyhook
// read from the API, whose apiVersion may be left empty).
func KindOf(sk *Skyhook) RolloutKind {
	if sk.GroupVersionKind().Group == NodeWrightGroup {
		return NodeWrights
	}
	return Skyhooks
}

// Named is the rollout of the kind with the name.
func (k RolloutKind) Named(name string) RolloutRef { return RolloutRef{Kind: k, Name: name} }

// PauseAnnotation set to "true" on an object of the kind stops new work.
func (k RolloutKind) PauseAnnotation() string { return k.Prefix + "/pause" }

// DisableAnnotation set to "true" on an object of the kind skips it.
func (k RolloutKind) DisableAnnotation() string { return k.Prefix + "/disable" }

// ResetBatchStateAnnotation on an object of the kind asks the operator to
// start its DeploymentPolicy batches over (see ResetBatchStateAnnotation).
func (k RolloutKind) ResetBatchStateAnnotation() string { return k.Prefix + "/reset-batch-state" }

// VersionAnnotation on an object of the kind is the version of the
// operator that handles it.
func (k RolloutKind) VersionAnnotation() string { return k.Prefix + "/version" }

// OwnerLabel labels what belongs to a rollout of the kind (its stage pods,
// its package snapshots) with the rollout's name: skyhook.nvidia.com/skyhook,
// nodewright.nvidia.com/nodewright.
func (k RolloutKind) OwnerLabel() string { return k.Prefix + "/" + strings.ToLower(k.Kind) }

// RuntimeRequiredTaint is the runtime-required taint the kind's rollouts
// hold on nodes unless the operator is told another:
// <prefix>=runtime-required:NoSchedule (NodeWright v0.18 moved its
// default to nodewright.nvidia.com).
func (k RolloutKind) RuntimeRequiredTaint() corev1.Taint {
	return corev1.Taint{Key: k.Prefix, Value: RuntimeRequiredTaintValue, Effect: corev1.TaintEffectNoSchedule}
}

// IgnoreNodeLabel set to "true" on a node leaves it out of every rollout
// of the kind.
func (k RolloutKind) IgnoreNodeLabel() string { return k.Prefix + "/ignore" }

// RuntimeRequiredCordonAnnotation ("true") on a node marks the cordon
// NodeWright v0.19 places, with runtimeRequiredCordonAfter, once the
// runtime-required taint comes off: it outlasts interrupts and resets, and
// only whoever removes the annotation lifts it.
func (k RolloutKind) RuntimeRequiredCordonAnnotation() string {
	return k.Prefix + "/runtimeRequiredCordon"
}

// RolloutRef names one rollout object, and so every key it writes on a
// node.
//
// +kubebuilder:object:generate=false
type RolloutRef struct {
	Kind RolloutKind
	Name string
}

// RefOf names the rollout object sk stands for.
func RefOf(sk *Skyhook) RolloutRef { return KindOf(sk).Named(sk.Name) }

// String is "<Kind>/<name>", unique among the rollouts of every kind.
func (r RolloutRef) String() string { return r.Kind.Kind + "/" + r.Name }

// NodeStateAnnotation is the node annotation key holding the rollout's
// NodeState.
func (r RolloutRef) NodeStateAnnotation() string { return r.key("nodeState_") }

// StatusKey is the node label and annotation key holding the rollout's
// Status on the node.
func (r RolloutRef) StatusKey() string { return r.key("status_") }

// ConfigAnnotation is the node annotation key holding the configMap hashes
// of the rollout's packages.
func (r RolloutRef) ConfigAnnotation() string { return r.key("config_") }

// BatchAnnotation is the node annotation key holding the batch the node
// last started in.
func (r RolloutRef) BatchAnnotation() string { return r.key("batch_") }

// InterruptAnnotation is the node annotation key holding the rollout's
// interrupt in progress on the node.
func (r RolloutRef) InterruptAnnotation() string { return r.key("interrupt_") }

// VersionAnnotation is the node annotation key holding the version of the
// operator that last wrote the rollout's record.
func (r RolloutRef) VersionAnnotation() string { return r.key("version_") }

// DrainStartAnnotation is NodeWright's node annotation key holding when the
// rollout's drain of the node began (RFC 3339, nanoseconds), while it
// lasts.
func (r RolloutRef) DrainStartAnnotation() string { return r.key("drainStart_") }

// DrainBlockedAnnotation is NodeWright's node annotation key holding the
// pods that block the rollout's drain of the node (a JSON array of
// {namespace, name, reason, detail}).
func (r RolloutRef) DrainBlockedAnnotation() string { return r.key("drainBlocked_") }

// CordonAnnotation is NodeWright's node annotation key marking a cordon of
// the rollout.
func (r RolloutRef) CordonAnnotation() string { return r.key("cordon_") }

// NodeConditionType is the type of the rollout's node condition named
// condition (NotReady, Erroring), as NodeWright names them.
func (r RolloutRef) NodeConditionType(condition string) string {
	return r.Kind.Prefix + "/" + r.Name + "/" + condition
}

// BootIDAnnotation is the node's boot ID as the rollout last acknowledged
// it, kept only when the operator re-applies after reboots
// (REAPPLY_ON_REBOOT): a boot ID other than this one, outside the
// rollout's own interrupt, is a reboot whose effects are to be re-applied.
// (NodeWright keeps it in its status, nodeBootIds, bounded here.)
func (r RolloutRef) BootIDAnnotation() string { return r.key("bootID_") }

// RecordAnnotations are the node annotation keys of the rollout's record
// on a node: nodeState_, status_, config_, batch_, interrupt_, version_,
// drainStart_, drainBlocked_, bootID_. The status_ key is a label too. (cordon_
// belongs to its cordon, not its record: see reconcile/cordon.)
func (r RolloutRef) RecordAnnotations() []string {
	return []string{r.NodeStateAnnotation(), r.StatusKey(), r.ConfigAnnotation(), r.BatchAnnotation(),
		r.InterruptAnnotation(), r.VersionAnnotation(), r.DrainStartAnnotation(), r.DrainBlockedAnnotation(), r.BootIDAnnotation()}
}

// RecordOf is the rollout whose nodeState annotation key is key, if it is
// one of any kind's.
func RecordOf(key string) (RolloutRef, bool) {
	for _, k := range RolloutKinds {
		if name, ok := strings.CutPrefix(key, k.Prefix+"/nodeState_"); ok && name != "" {
			return k.Named(name), true
		}
	}
	return RolloutRef{}, false
}

func (r RolloutRef) key(prefix string) string { return r.Kind.Prefix + "/" + prefix + r.Name }
