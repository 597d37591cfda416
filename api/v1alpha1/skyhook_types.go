package v1alpha1

import (
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SkyhookKind is the kind name of Skyhook objects.
const SkyhookKind = "Skyhook"

// DefaultPriority is the priority of a Skyhook that does not set one.
const DefaultPriority = 200

// SkyhookSpec declares the packages to install on the host OS of the selected
// nodes and how to roll them out.
//
// +kubebuilder:validation:XValidation:rule="!has(self.deploymentPolicy) || !has(self.interruptionBudget) || (!has(self.interruptionBudget.percent) && !has(self.interruptionBudget.count))",message="deploymentPolicy and interruptionBudget are mutually exclusive: the policy carries the budget"
type SkyhookSpec struct {
	// Serial runs one package at a time on a node: a package starts only
	// once no other package of this Skyhook runs a stage there (dependsOn
	// still orders them). Without it, packages that do not depend on each
	// other run side by side.
	// +optional
	Serial bool `json:"serial,omitempty"`

	// Sequencing says how Skyhooks with a higher priority number wait for
	// this one: "node" (the default), on each node until this Skyhook is
	// complete on that node; "all", everywhere until it is complete on every
	// node it selects.
	// +kubebuilder:default=node
	// +optional
	Sequencing Sequencing `json:"sequencing,omitempty"`

	// Pause is kept for manifests written for the reference system. The
	// skyhook.nvidia.com/pause annotation is what pauses a Skyhook.
	// +optional
	Pause bool `json:"pause,omitempty"`

	// NodeSelector selects the nodes the packages go on. Empty selects every node.
	// +optional
	NodeSelector metav1.LabelSelector `json:"nodeSelectors,omitempty"`

	// InterruptionBudget caps how many selected nodes are worked on (in
	// progress or interrupted) at the same time. Unset means no cap. Use
	// either this or deploymentPolicy.
	// +optional
	InterruptionBudget InterruptionBudget `json:"interruptionBudget,omitempty"`

	// DeploymentPolicy names a cluster-scoped DeploymentPolicy whose
	// compartments, budgets and strategies govern the rollout. Exclusive with
	// interruptionBudget.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	DeploymentPolicy string `json:"deploymentPolicy,omitempty"`

	// DeploymentPolicyOptions tune how this Skyhook uses its DeploymentPolicy.
	// +optional
	DeploymentPolicyOptions DeploymentPolicyOptions `json:"deploymentPolicyOptions,omitempty"`

	// AdditionalTolerations are tolerations added to every stage pod, for
	// nodes whose taints the packages are meant to run under.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	AdditionalTolerations []corev1.Toleration `json:"additionalTolerations,omitempty"`

	// RuntimeRequired marks this Skyhook as required before the node may run
	// workloads: the runtime-required taint stays on a node until every
	// runtimeRequired Skyhook that targets it is complete there.
	// +optional
	RuntimeRequired bool `json:"runtimeRequired,omitempty"`

	// AutoTaintNewNodes puts the runtime-required taint on new nodes that
	// match this Skyhook, so no workload lands before it is done: a node is
	// new while it carries no skyhook.nvidia.com/* annotation (no Skyhook has
	// touched it), on day 0 as well as when it joins later. Only meaningful
	// with runtimeRequired.
	// +optional
	AutoTaintNewNodes bool `json:"autoTaintNewNodes,omitempty"`

	// PodNonInterruptLabels selects pods that must not be disturbed: a node
	// due for an interrupt is cordoned (no new pods land) and then waits,
	// undrained, until no such pod runs on it.
	// +optional
	PodNonInterruptLabels metav1.LabelSelector `json:"podNonInterruptLabels,omitempty"`

	// Drain tunes how a node is drained before an interrupt.
	// +optional
	Drain *DrainOptions `json:"drain,omitempty"`

	// DrainConfig is NodeWright's (v0.18+) drain settings: which pods a
	// drain before an interrupt may remove and how, and how long it may
	// take. Unset, a drain evicts every pod but DaemonSet pods and waits
	// as long as it takes (or as spec.drain says).
	// +optional
	DrainConfig *DrainConfig `json:"drainConfig,omitempty"`

	// RuntimeRequiredCordonAfter, with runtimeRequired, cordons a node in
	// the same write that lifts the runtime-required taint from it, marked
	// <prefix>/runtimeRequiredCordon, so that an admin decides when it
	// takes workloads (NodeWright v0.19). Uncordoning the node ends it.
	// +optional
	RuntimeRequiredCordonAfter bool `json:"runtimeRequiredCordonAfter,omitempty"`

	// Packages maps a package name to the package to install. A package name
	// starts with a lowercase letter, ends with a lowercase letter and has at
	// most 43 characters of lowercase letters, digits and '-'.
	// +optional
	Packages Packages `json:"packages,omitempty"`

	// Priority orders Skyhooks on a node: a Skyhook runs on a node only after
	// every Skyhook with a lower priority number that targets the node is
	// complete there. Ties are broken by name.
	// +kubebuilder:default=200
	// +kubebuilder:validation:Minimum=1
	// +optional
	Priority int `json:"priority,omitempty"`
}

// Sequencing is how the Skyhooks after one wait for it.
// +kubebuilder:validation:Enum=node;all
type Sequencing string

// The sequencing modes.
const (
	// SequencingNode: a node moves on to the next Skyhook as soon as this
	// one is complete on it.
	SequencingNode Sequencing = "node"
	// SequencingAll: no node moves on until this Skyhook is complete on
	// every node it selects.
	SequencingAll Sequencing = "all"
)

// DrainOnTimeout is what happens to a drain that has not finished in time.
// +kubebuilder:validation:Enum=Wait;Delete;Skip;Yield
type DrainOnTimeout string

// The drain timeout actions.
const (
	// DrainWait keeps the node cordoned and keeps evicting, with the
	// DrainBlocked condition naming what holds it.
	DrainWait DrainOnTimeout = "Wait"
	// DrainDelete deletes the pods that eviction cannot move (disruption
	// budgets and pods without a controller no longer hold the node).
	DrainDelete DrainOnTimeout = "Delete"
	// DrainSkip gives the node up for this generation of the Skyhook: it is
	// uncordoned, its interrupt is not run, it is reported blocked and its
	// budget slot goes to the next node. It also ends a wait for pods
	// matching podNonInterruptLabels, which stay.
	DrainSkip DrainOnTimeout = "Skip"
	// DrainYield gives the node's budget slot back while pods matching
	// podNonInterruptLabels, or a PodDisruptionBudget, hold it: the node
	// waits behind the rollout's other nodes and is looked at again when a
	// slot is free, at most every 30 seconds, until the pods end or say
	// they may be interrupted (the skyhook.nvidia.com/interruptible
	// annotation). It keeps its cordon unless uncordonWhileYielded.
	DrainYield DrainOnTimeout = "Yield"
)

// DrainOptions tune the drain before an interrupt. Pods matching
// podNonInterruptLabels are never deleted; the node waits for them, until
// the timeout when OnTimeout is Skip.
type DrainOptions struct {
	// Timeout after which OnTimeout applies, counted from the start of the
	// evictions.
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="timeout must be positive"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// OnTimeout is Wait (the default), Delete, Skip or Yield.
	// +kubebuilder:default=Wait
	// +optional
	OnTimeout DrainOnTimeout `json:"onTimeout,omitempty"`

	// UncordonWhileYielded takes the cordon off a node that yielded
	// (onTimeout Yield) until it is tried again, so its workloads may be
	// rescheduled there meanwhile; by default it stays cordoned, as
	// NodeWright keeps a node whose drain waits.
	// +optional
	UncordonWhileYielded bool `json:"uncordonWhileYielded,omitempty"`
}

// DrainConfig is NodeWright's drain settings. Each bool is a pointer so
// that unset keeps NodeWright's default.
type DrainConfig struct {
	// DisableEviction deletes pods instead of evicting them, so
	// PodDisruptionBudgets do not hold the drain. Default false.
	// +nullable
	// +optional
	DisableEviction *bool `json:"disableEviction,omitempty"`

	// DeleteEmptyDirData lets the drain remove pods with emptyDir volumes
	// (their data is lost); false makes such pods block it. Default true.
	// +nullable
	// +optional
	DeleteEmptyDirData *bool `json:"deleteEmptyDirData,omitempty"`

	// Force lets the drain remove pods that no controller recreates;
	// false makes such pods block it. Default true.
	// +nullable
	// +optional
	Force *bool `json:"force,omitempty"`

	// IgnoreDaemonSets leaves DaemonSet pods on the node. Default true.
	// +nullable
	// +optional
	IgnoreDaemonSets *bool `json:"ignoreDaemonSets,omitempty"`

	// Timeout bounds a drain, from the first pass that finds the node not
	// drained: past it the node is erroring, stays cordoned, and nothing
	// more is evicted. Unset or 0 waits as long as it takes. Must not be
	// negative.
	// +nullable
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// GracePeriod is the termination grace period given to the pods the
	// drain removes, rounded up to whole seconds; unset, each pod's own.
	// Must not be negative.
	// +nullable
	// +optional
	GracePeriod *metav1.Duration `json:"gracePeriod,omitempty"`
}

// InterruptionBudget caps the nodes worked on at once, either as a percentage
// of the selected nodes or as a count; at most one of the two.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.percent) && has(self.count))",message="percent and count are mutually exclusive"
type InterruptionBudget struct {
	// Percent of the selected nodes, rounded down, at least one node.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	Percent *int `json:"percent,omitempty"`

	// Count of nodes.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Count *int `json:"count,omitempty"`
}

// DeploymentPolicyOptions tune how a Skyhook uses its DeploymentPolicy.
type DeploymentPolicyOptions struct {
	// ResetBatchStateOnCompletion starts the policy's batch sizing over for
	// this Skyhook's next rollout once a rollout completes. Unset uses the
	// policy's setting.
	// +optional
	ResetBatchStateOnCompletion *bool `json:"resetBatchStateOnCompletion,omitempty"`
}

// Packages maps package names to packages.
//
// +kubebuilder:validation:MaxProperties=64
// +kubebuilder:validation:XValidation:rule="self.all(name, name.matches('^[a-z][-a-z0-9]{0,41}[a-z]$'))",message="package names must match ^[a-z][-a-z0-9]{0,41}[a-z]$"
type Packages map[string]Package

// PackageRef names one version of a package.
type PackageRef struct {
	// Name of the package. Defaults to its key in spec.packages and must
	// equal it when given.
	// +kubebuilder:validation:Pattern=`^[a-z][-a-z0-9]{0,41}[a-z]$`
	// +optional
	Name string `json:"name,omitempty"`

	// Version of the package: a semantic version; "1.2" and "2024.05.10" are
	// accepted. Moving it up runs upgrade, moving it down uninstalls the old
	// version and applies the new one.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +required
	Version string `json:"version,omitempty"`
}

// Package is one package: a container image holding lifecycle steps for the
// host, and how to run it.
type Package struct {
	PackageRef `json:",inline"`

	// Image is the container image repository of the package, for example
	// ghcr.io/nvidia/skyhook-packages/shellscript. A tag in it must match the
	// version; a digest pins the content. The tag defaults to the version.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +required
	Image string `json:"image,omitempty"`

	// ContainerSHA is the expected digest of the image (sha256:...); when
	// set, the image is pulled by digest.
	// +kubebuilder:validation:Pattern=`^(sha256:)?[a-f0-9]{64}$`
	// +kubebuilder:validation:MaxLength=71
	// +optional
	ContainerSHA string `json:"containerSHA,omitempty"`

	// AgentImageOverride replaces the operator-wide agent image for this
	// package's stage pods.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	AgentImageOverride string `json:"agentImageOverride,omitempty"`

	// Interrupt is what the node needs after this package is applied or
	// upgraded: a reboot, a restart of services, or nothing.
	// +optional
	Interrupt *Interrupt `json:"interrupt,omitempty"`

	// ConfigInterrupts maps a configMap key, or a glob over keys, to the
	// interrupt needed when that key's content changes.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	ConfigInterrupts map[string]Interrupt `json:"configInterrupts,omitempty"`

	// ConfigMap holds files, key to content, mounted into the package's
	// configmaps directory for its steps. A change runs the config stage again.
	// +optional
	ConfigMap map[string]string `json:"configMap,omitempty"`

	// Env is the environment of the package's steps.
	// +kubebuilder:validation:MaxItems=128
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// Resources override the stage pod's resources: all four values or none.
	// +optional
	Resources *ResourceRequirements `json:"resources,omitempty"`

	// DependsOn maps a package of this Skyhook to its version; this package
	// starts on a node only after those are complete on that node.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	DependsOn map[string]string `json:"dependsOn,omitempty"`

	// GracefulShutdown is the termination grace period of the stage pods.
	// +optional
	GracefulShutdown *metav1.Duration `json:"gracefulShutdown,omitempty"`

	// StageTimeout bounds each run of one of the package's stages: past it
	// the stage pod is stopped and the try has failed. Unset, the
	// operator's default applies (JOB_STAGE_TIMEOUT, 1h); "0s" sets no
	// bound. Must not be negative.
	// +optional
	StageTimeout *metav1.Duration `json:"stageTimeout,omitempty"`

	// Uninstall declares that the package can be uninstalled (it has
	// uninstall steps) and asks for it. Without enabled, removing the
	// package from the Skyhook or lowering its version runs nothing on the
	// nodes and its record stays there as a marker.
	// +optional
	Uninstall *Uninstall `json:"uninstall,omitempty"`
}

// Uninstall is a package's explicit uninstall.
//
// +kubebuilder:validation:XValidation:rule="!self.apply || self.enabled",message="uninstall.apply requires uninstall.enabled: only a package that declares uninstall support can be uninstalled"
type Uninstall struct {
	// Enabled declares that the package has uninstall steps. The operator
	// then runs them before the package may be removed from the Skyhook or
	// downgraded, and on every node when the Skyhook is deleted.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled"`

	// Apply uninstalls the package from every selected node now; once it is
	// gone from a node's record it is uninstalled there. Setting it back
	// to false cancels: nodes still uninstalling install the package
	// again, except those already in the uninstall interrupt.
	// +kubebuilder:default=false
	// +optional
	Apply bool `json:"apply"`
}

// UninstallEnabled reports whether the package declares uninstall support.
func (in *Package) UninstallEnabled() bool {
	return in != nil && in.Uninstall != nil && in.Uninstall.Enabled
}

// Uninstalling reports whether the package is asked to be uninstalled.
func (in *Package) Uninstalling() bool { return in.UninstallEnabled() && in.Uninstall.Apply }

// InterruptType is the kind of interrupt a package asks for.
// +kubebuilder:validation:Enum=service;reboot;noop;restartAllServices
type InterruptType string

const (
	// InterruptService restarts the listed services after a daemon-reload.
	InterruptService InterruptType = "service"
	// InterruptReboot reboots the node.
	InterruptReboot InterruptType = "reboot"
	// InterruptNoop cordons and drains the node but runs nothing.
	InterruptNoop InterruptType = "noop"
	// InterruptRestartAllServices restarts every service.
	InterruptRestartAllServices InterruptType = "restartAllServices"
)

// Interrupt is a disruptive action on a node; it runs with the node cordoned
// and drained.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'service' || (has(self.services) && size(self.services) > 0)",message="a service interrupt needs at least one service"
type Interrupt struct {
	// Type of the interrupt.
	// +required
	Type InterruptType `json:"type"`

	// Services to restart, for the service type.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	// +optional
	Services []string `json:"services,omitempty"`
}

// ResourceRequirements override the resources of a package's stage pods.
//
// +kubebuilder:validation:XValidation:rule="[has(self.cpuRequest), has(self.cpuLimit), has(self.memoryRequest), has(self.memoryLimit)].all(set, set) || [has(self.cpuRequest), has(self.cpuLimit), has(self.memoryRequest), has(self.memoryLimit)].all(set, !set)",message="set all four of cpuRequest, cpuLimit, memoryRequest and memoryLimit, or none"
type ResourceRequirements struct {
	// CPURequest of the stage containers, greater than 0. Pointers tell a
	// value of 0, which admission refuses, from one not given.
	// +optional
	CPURequest *resource.Quantity `json:"cpuRequest,omitempty"`
	// CPULimit of the stage containers; at least cpuRequest.
	// +optional
	CPULimit *resource.Quantity `json:"cpuLimit,omitempty"`
	// MemoryRequest of the stage containers, greater than 0.
	// +optional
	MemoryRequest *resource.Quantity `json:"memoryRequest,omitempty"`
	// MemoryLimit of the stage containers; at least memoryRequest.
	// +optional
	MemoryLimit *resource.Quantity `json:"memoryLimit,omitempty"`
}

// Status is the summary state of a Skyhook, or of a package on a node, as the
// reference system names it.
// +kubebuilder:validation:Enum=unknown;complete;blocked;waiting;disabled;paused;in_progress;erroring
type Status string

// The summary states.
const (
	StatusUnknown    Status = "unknown"
	StatusComplete   Status = "complete"
	StatusBlocked    Status = "blocked"
	StatusWaiting    Status = "waiting"
	StatusDisabled   Status = "disabled"
	StatusPaused     Status = "paused"
	StatusInProgress Status = "in_progress"
	StatusErroring   Status = "erroring"
)

// MaxAttentionNodes bounds status.nodesNeedingAttention so that the object
// stays small at any cluster size.
const MaxAttentionNodes = 50

// SkyhookStatus is the observed state of a Skyhook. It is an aggregate: per
// node detail lives on the nodes (see NodeStateAnnotation), and only the
// nodes that need attention are listed here, at most MaxAttentionNodes.
type SkyhookStatus struct {
	// ObservedGeneration is the generation whose spec has been fully acted
	// on. It is -1 until the operator first looks at the object, so that
	// kstatus does not read a brand-new Skyhook as current.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciling and Stalled as Flux defines them, and
	// NodesBlocked, DrainBlocked and RolloutHalted.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	meta.ReconcileRequestStatus `json:",inline"`

	// Status summarises the rollout the way the reference system does.
	// +optional
	Status Status `json:"status,omitempty"`

	// CompleteNodes is "complete/selected", for example "7/10".
	// +optional
	CompleteNodes string `json:"completeNodes,omitempty"`

	// NodesInProgress is the number of nodes being worked on now.
	// +optional
	NodesInProgress int `json:"nodesInProgress"`

	// PackageList lists the packages as name:version, comma separated;
	// empty (and still there, as NodeWright's schema defaults it) when the
	// spec has none.
	// +kubebuilder:default=""
	// +optional
	PackageList string `json:"packageList,omitempty"`

	// NodesNeedingAttention lists nodes that are blocked or erroring, with why,
	// capped at MaxAttentionNodes entries (the conditions give the totals).
	// +kubebuilder:validation:MaxItems=50
	// +listType=map
	// +listMapKey=name
	// +optional
	NodesNeedingAttention []NodeAttention `json:"nodesNeedingAttention,omitempty"`

	// Compartments is the rollout state of each DeploymentPolicy
	// compartment: its batches, their failures and whether it halted. Empty
	// for a Skyhook with an interruption budget instead of a policy.
	// +kubebuilder:validation:MaxItems=65
	// +listType=map
	// +listMapKey=name
	// +optional
	Compartments []CompartmentStatus `json:"compartments,omitempty"`

	// The fields below are NodeWright's, written as it writes them so that
	// its readers (scripts, dashboards, its end-to-end suite) work here.
	// The per-node maps are bounded (MaxNodeStateNodes, MaxNodeStatusNodes)
	// so the object stays far under etcd's limit at any fleet size; nodes
	// needing attention come first, and OmittedNodes counts the rest.

	// NodeState is each node's record of this Skyhook's packages (the
	// nodeState_<skyhook> annotation), for at most MaxNodeStateNodes nodes.
	// +optional
	NodeState map[string]NodeState `json:"nodeState,omitempty"`

	// NodeStatus is this Skyhook's status on each node, for at most
	// MaxNodeStatusNodes nodes.
	// +optional
	NodeStatus map[string]Status `json:"nodeStatus,omitempty"`

	// NodeBootIDs is each listed node's boot ID.
	// +optional
	NodeBootIDs map[string]string `json:"nodeBootIds,omitempty"`

	// NodePriority is when each node in progress started, in the order
	// nodes started; a node leaves it when it completes.
	// +optional
	NodePriority map[string]metav1.Time `json:"nodePriority,omitempty"`

	// NodeOrderOffset counts the nodes that left NodePriority, so that a
	// node's place in the rollout (offset + its place in NodePriority)
	// only grows. Written also when 0, as NodeWright's reset writes it
	// and its end-to-end suite then asserts it.
	// +optional
	NodeOrderOffset int `json:"nodeOrderOffset"`

	// CompartmentStatuses is the rollout's progress per compartment of the
	// DeploymentPolicy, or in __default__ for a Skyhook with a budget.
	// +optional
	CompartmentStatuses map[string]CompartmentProgress `json:"compartmentStatuses,omitempty"`

	// OmittedNodes counts the selected nodes the per-node maps leave out.
	// +optional
	OmittedNodes *OmittedNodes `json:"omittedNodes,omitempty"`
}

// The bounds of the per-node status maps. At 10,000 nodes with 10 packages
// each the status stays under 600 KiB (TestStatusMapsStayBounded).
const (
	MaxNodeStateNodes  = 200
	MaxNodeStatusNodes = 2000
)

// OmittedNodes counts the nodes left out of the per-node status maps; their
// node annotations and labels still say everything.
type OmittedNodes struct {
	// NodeState is the number of selected nodes not in status.nodeState.
	// +optional
	NodeState int `json:"nodeState,omitempty"`
	// NodeStatus is the number of selected nodes not in status.nodeStatus
	// and status.nodeBootIds.
	// +optional
	NodeStatus int `json:"nodeStatus,omitempty"`
}

// CompartmentProgress is NodeWright's summary of one compartment.
type CompartmentProgress struct {
	// Matched is the number of the Skyhook's nodes in the compartment.
	Matched int `json:"matched"`
	// Ceiling is how many of them may be in progress at once.
	Ceiling int `json:"ceiling"`
	// InProgress is how many are.
	InProgress int `json:"inProgress"`
	// Completed is how many are complete.
	Completed int `json:"completed"`
	// ProgressPercent is Completed out of Matched, 0 to 100.
	ProgressPercent int `json:"progressPercent"`
	// BatchState is the compartment's batch sizing, for a DeploymentPolicy.
	// +optional
	BatchState *BatchProgress `json:"batchState,omitempty"`
}

// BatchProgress is where a compartment's batches stand.
type BatchProgress struct {
	// CurrentBatch numbers the batch now open.
	// +optional
	CurrentBatch int `json:"currentBatch,omitempty"`
	// LastBatchSize is the size it was opened with.
	// +optional
	LastBatchSize int `json:"lastBatchSize,omitempty"`
	// CompletedNodes counts the compartment's complete nodes.
	// +optional
	CompletedNodes int `json:"completedNodes,omitempty"`
	// FailedNodes counts the compartment's erroring nodes.
	// +optional
	FailedNodes int `json:"failedNodes,omitempty"`
	// LastBatchFailed is true when the last batch judged ended below the
	// strategy's batchThreshold.
	// +optional
	LastBatchFailed bool `json:"lastBatchFailed,omitempty"`
	// ConsecutiveFailures counts batches in a row below the threshold.
	// +optional
	ConsecutiveFailures int `json:"consecutiveFailures,omitempty"`
	// ShouldStop is true once the compartment halted.
	// +optional
	ShouldStop bool `json:"shouldStop,omitempty"`
}

// CompartmentStatus is where a Skyhook's rollout stands in one compartment
// of its DeploymentPolicy. Batch membership is recorded on the nodes (see
// BatchAnnotation), so this stays the same size at any cluster size.
type CompartmentStatus struct {
	// Name of the compartment; __default__ for nodes no compartment selects.
	// +required
	Name string `json:"name"`

	// Nodes of the Skyhook in the compartment, and how many are complete and
	// being worked on.
	// +optional
	Nodes int32 `json:"nodes"`
	// +optional
	Complete int32 `json:"complete"`
	// +optional
	InProgress int32 `json:"inProgress"`
	// Erroring counts the nodes of InProgress whose stage is failing.
	// +optional
	Erroring int32 `json:"erroring,omitempty"`

	// Batch numbers the compartment's batches; it only grows, also across
	// rollouts, so a node's batch annotation never names an older batch.
	// +optional
	Batch int32 `json:"batch,omitempty"`

	// BatchOffset is the batch number of the last reset: batches are
	// counted from it for NodeWright's currentBatch (Batch - BatchOffset,
	// at least 1), so a reset reads as batch 1 again while Batch itself
	// keeps growing.
	// +optional
	BatchOffset int32 `json:"batchOffset,omitempty"`

	// BatchSize is the size the current batch was opened with (budget and
	// waiting nodes may have let fewer start).
	// +optional
	BatchSize int32 `json:"batchSize,omitempty"`

	// ConsecutiveFailures counts the batches in a row that ended below the
	// strategy's batchThreshold before the safetyLimit was reached.
	// +optional
	ConsecutiveFailures int32 `json:"consecutiveFailures,omitempty"`

	// Halted is true once ConsecutiveFailures reached the strategy's
	// failureThreshold: no new node starts in the compartment until the
	// Skyhook's spec changes.
	// +optional
	Halted bool `json:"halted,omitempty"`

	// Generation is the Skyhook generation this batch state belongs to.
	// +optional
	Generation int64 `json:"generation,omitempty"`
}

// CurrentBatch is the number of the batch open now counted from the last
// reset, as NodeWright numbers it: 1 for the first, also before it opens.
func (s CompartmentStatus) CurrentBatch() int {
	return max(1, int(s.Batch-s.BatchOffset))
}

// NodeAttention says why a node needs an admin's attention.
type NodeAttention struct {
	// Name of the node.
	// +required
	Name string `json:"name"`
	// Status of this Skyhook on the node.
	// +required
	Status Status `json:"status"`
	// Message says why, for example the failing package, stage and exit code.
	// +optional
	Message string `json:"message,omitempty"`
}

// Skyhook declares packages for the host OS of a set of nodes and how to roll
// them out.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories={skyhook-all,fluxcd}
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.status"
// +kubebuilder:printcolumn:name="Complete",type="string",JSONPath=".status.completeNodes"
// +kubebuilder:printcolumn:name="In-Progress",type="integer",JSONPath=".status.nodesInProgress"
// +kubebuilder:printcolumn:name="Priority",type="integer",JSONPath=".spec.priority"
// +kubebuilder:printcolumn:name="Packages",type="string",JSONPath=".status.packageList",priority=1
// +kubebuilder:printcolumn:name="Policy",type="string",JSONPath=".spec.deploymentPolicy",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 53",message="metadata.name may have at most 53 characters so that the node label and annotation keys derived from it (skyhook.nvidia.com/nodeState_<name>) stay within 63 characters"
type Skyhook struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec declares the packages and the rollout.
	// +required
	Spec SkyhookSpec `json:"spec"`

	// Status is written by the operator.
	// +kubebuilder:default={"observedGeneration":-1}
	// +optional
	Status SkyhookStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions; it makes Skyhook a
// github.com/fluxcd/pkg/runtime/conditions Getter.
func (in *Skyhook) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the status conditions; it makes Skyhook a
// github.com/fluxcd/pkg/runtime/conditions Setter.
func (in *Skyhook) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}

// SkyhookList is a list of Skyhooks.
//
// +kubebuilder:object:root=true
type SkyhookList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Skyhooks.
	Items []Skyhook `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Skyhook{}, &SkyhookList{})
}
