package reconcile

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/drain"
	"github.com/skyhook-go/skyhook/reconcile/fleetbudget"
	"github.com/skyhook-go/skyhook/reconcile/imagevolume"
	"github.com/skyhook-go/skyhook/reconcile/memory"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/reconcile/taints"
)

// The finalizer of each kind (skyhookv1.RolloutKind.Finalizer) lets the
// operator uninstall a deleted rollout's packages and clean its records off
// the nodes. They are NodeWright's finalizers (skyhook.nvidia.com/skyhook,
// nodewright.nvidia.com/nodewright), so that a rollout taken over from it
// is deleted by this operator.

// legacyFinalizer is the finalizer earlier releases of this operator put on
// Skyhooks; it is replaced by the kind's.
const legacyFinalizer = skyhookv1.MetadataPrefix + "/cleanup"

// SkyhookReconciler rolls a Skyhook's packages across its nodes, stage by
// stage, within its budget. One Reconcile handles one Skyhook: nodes and
// stage pods map to the Skyhooks they concern, and nothing is rescanned on a
// timer (requeues are for backoff only).
type SkyhookReconciler struct {
	Client client.Client
	// Namespace is where stage pods and package ConfigMaps live.
	Namespace string
	// AgentImage runs the stages unless a package overrides it.
	AgentImage string
	// PauseImage keeps a finished stage pod until its outcome is recorded.
	PauseImage string
	// ImagePullSecrets name Secrets in Namespace that stage pods pull their
	// images with.
	ImagePullSecrets []string
	// MaxAttempts bounds the tries of one stage; then the Skyhook is Stalled.
	MaxAttempts int32
	// APIReader reads what the cache does not hold: the pods on a node
	// being drained.
	APIReader client.Reader
	// RebootTimeout bounds the wait for a rebooted node to come back Ready
	// with a new boot ID (10 minutes when zero).
	RebootTimeout time.Duration
	// NotReadyTimeout is how long a node in progress that went NotReady
	// keeps its budget slot before the rollout skips it (10 minutes when
	// zero).
	NotReadyTimeout time.Duration
	// StageTimeout bounds one stage pod's run (1 hour when zero,
	// NoStageTimeout for no bound) unless its package sets stageTimeout:
	// past it the kubelet stops the pod and the try has failed.
	StageTimeout time.Duration
	// RuntimeRequiredTaint is the taint runtimeRequired rollouts hold on
	// their nodes (NodeWright's RUNTIME_REQUIRED_TAINT). With its key empty
	// each kind holds its own (RolloutKind.RuntimeRequiredTaint). Either
	// way every kind's default is recognised: tolerated by stage pods,
	// taken off a node done, and a node carrying one counts as gated.
	RuntimeRequiredTaint corev1.Taint
	// SucceededTTL and FailedTTL are how long a stage pod its stage no
	// longer needs is kept for its logs, by outcome (NodeWright's
	// JOB_TTL_SUCCEEDED and JOB_TTL_FAILED); 0 deletes it at once. Of the
	// failed attempts of a stage the first and the latest are kept.
	SucceededTTL, FailedTTL time.Duration
	// ReapplyOnReboot starts a rollout over on a node that rebooted outside
	// its own interrupts (NodeWright's REAPPLY_ON_REBOOT): for hosts whose
	// changes do not outlive a boot (a read-only or stateless root). See
	// reboots.go.
	ReapplyOnReboot bool
	// PodPerStage gives every stage a pod of its own. Otherwise an
	// install's config stage runs in the pod of its apply or upgrade (a
	// run: one pod, each stage its own init containers, recorded stage by
	// stage). See stage_runs.go.
	PodPerStage bool
	// StageShape lays a stage pod's stages out in containers: compact (a
	// stage and its check in one container; the default) or NodeWright's
	// (the check in a container of its own). See stagepod.Shape.
	StageShape stagepod.Shape
	// ImageVolumes asks the apiserver whether it keeps image volumes; where
	// it does and a node's kubelet and runtime mount them, the node's
	// stage pods mount their package images and have no copy container
	// (stagepod.Spec.ImageVolume). Nil: every stage pod copies.
	ImageVolumes *imagevolume.Prober
	// Parallelism bounds the nodes whose API requests a pass sends at once
	// (16 when zero).
	Parallelism int
	// OperatorVersion is written where NodeWright writes its version: the
	// nodes' version_<skyhook> annotations and the Skyhook's
	// skyhook.nvidia.com/version annotation. Empty writes neither.
	OperatorVersion string
	Recorder        events.EventRecorder

	// memory is what the reconciler remembers between passes, of each
	// Skyhook (reconcile/memory): forget drops all of it.
	memory memory.Memory[*nodeWork]
	// fleet serves the NodeDisruptionBudgets' slots to the passes of every
	// rollout (fleet_budget.go).
	fleet fleetbudget.Ledger
	// throttle remembers the evictions PodDisruptionBudgets refused lately,
	// by pod, so drains ask again at most every 30 s; it forgets by itself.
	throttle *drain.Throttle
}

// NoStageTimeout as the reconciler's StageTimeout sets no bound on a
// stage's run (JOB_STAGE_TIMEOUT=0, as NodeWright reads it).
const NoStageTimeout time.Duration = -1

// The reconciler's defaults, for the settings left zero.
const (
	// defaultMaxAttempts is NodeWright's JOB_BACKOFF_LIMIT 3: a first try
	// and three more.
	defaultMaxAttempts = 4
	// defaultParallelism is how many nodes a pass works on at once.
	defaultParallelism     = 16
	defaultNotReadyTimeout = 10 * time.Minute
	defaultRebootTimeout   = 10 * time.Minute
	defaultStageTimeout    = time.Hour
)

// runtimeTaintOf is the runtime-required taint a rollout of the kind puts
// on nodes.
func (r *SkyhookReconciler) runtimeTaintOf(kind skyhookv1.RolloutKind) corev1.Taint {
	if r.RuntimeRequiredTaint.Key != "" {
		return r.RuntimeRequiredTaint
	}
	return kind.RuntimeRequiredTaint()
}

// runtimeTaints are the runtime-required taints the operator recognises:
// the configured one and every kind's default.
func (r *SkyhookReconciler) runtimeTaints() []corev1.Taint {
	all := stagepod.DefaultRuntimeRequiredTaints()
	if t := r.RuntimeRequiredTaint; t.Key != "" && !taints.HasAny(&corev1.Node{Spec: corev1.NodeSpec{Taints: all}}, []corev1.Taint{t}) {
		all = append([]corev1.Taint{t}, all...)
	}
	return all
}

// setDefaults fills in the settings left zero; apiReader reads around the
// cache when APIReader is not set.
func (r *SkyhookReconciler) setDefaults(apiReader client.Reader) {
	if r.MaxAttempts == 0 {
		r.MaxAttempts = defaultMaxAttempts
	}
	if r.Parallelism == 0 {
		r.Parallelism = defaultParallelism
	}
	if r.NotReadyTimeout == 0 {
		r.NotReadyTimeout = defaultNotReadyTimeout
	}
	if r.RebootTimeout == 0 {
		r.RebootTimeout = defaultRebootTimeout
	}
	if r.StageTimeout == 0 {
		r.StageTimeout = defaultStageTimeout
	}
	if r.APIReader == nil {
		r.APIReader = apiReader
	}
	if r.throttle == nil {
		r.throttle = drain.NewThrottle()
	}
}
