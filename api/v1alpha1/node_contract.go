package v1alpha1

// The node-facing contract, kept from the reference system so that existing
// scripts and dashboards keep working. Per-node, per-Skyhook detail lives on
// the Node object under these keys; the Skyhook status only aggregates it.
const (
	// MetadataPrefix is the prefix of every label, annotation and taint key.
	MetadataPrefix = "skyhook.nvidia.com"

	// NodeStatePrefix is followed by the Skyhook name to form the node
	// annotation that holds a NodeState as JSON.
	NodeStatePrefix = MetadataPrefix + "/nodeState_"

	// StatusPrefix is followed by the Skyhook name to form the node label and
	// annotation holding that Skyhook's Status on the node.
	StatusPrefix = MetadataPrefix + "/status_"

	// ConfigPrefix is followed by the Skyhook name to form the node
	// annotation holding, per package, a hash of the configMap its config
	// stage last ran with (JSON map package → hash), so that a changed
	// configMap runs the config stage again.
	ConfigPrefix = MetadataPrefix + "/config_"

	// BatchPrefix is followed by the Skyhook name to form the node
	// annotation holding the number of the DeploymentPolicy batch the node
	// last started in (see CompartmentStatus.Batch).
	BatchPrefix = MetadataPrefix + "/batch_"

	// InterruptPrefix is followed by the Skyhook name to form the node
	// annotation holding the node's interrupt in progress (phase, the boot
	// ID before a reboot, the packages it is for).
	InterruptPrefix = MetadataPrefix + "/interrupt_"

	// VersionPrefix is followed by the Skyhook name to form the node
	// annotation holding the version of the operator that last wrote the
	// node's record (as NodeWright writes it).
	VersionPrefix = MetadataPrefix + "/version_"

	// CordonPrefix is followed by the Skyhook name to form the node
	// annotation ("true") NodeWright marks its cordons with; this operator
	// writes it beside its own signature (cordoned-by) and takes a cordon so
	// marked, without a signature, for the Skyhook's.
	CordonPrefix = MetadataPrefix + "/cordon_"

	// SkyhookVersionAnnotation on a Skyhook is the version of the operator
	// that handles it.
	SkyhookVersionAnnotation = MetadataPrefix + "/version"

	// IgnoreNodeLabel set to "true" excludes a node from every Skyhook; such
	// nodes are reported as blocked.
	IgnoreNodeLabel = MetadataPrefix + "/ignore"

	// PauseAnnotation set to "true" on a Skyhook stops new work; running
	// stages finish.
	PauseAnnotation = MetadataPrefix + "/pause"

	// DisableAnnotation set to "true" on a Skyhook skips it entirely without
	// holding back Skyhooks of a later priority.
	DisableAnnotation = MetadataPrefix + "/disable"

	// ResetBatchStateAnnotation on a Skyhook asks the operator to start its
	// DeploymentPolicy batches over (currentBatch 1, no failures, no halt)
	// and to clear its node order (nodePriority, nodeOrderOffset); the
	// operator removes it once done. Its value is when it was asked
	// (RFC 3339). The CLI's reset and deployment-policy reset set it.
	ResetBatchStateAnnotation = MetadataPrefix + "/reset-batch-state"

	// RuntimeRequiredTaintKey, RuntimeRequiredTaintValue and the NoSchedule
	// effect form the default runtime-required taint.
	RuntimeRequiredTaintKey   = MetadataPrefix
	RuntimeRequiredTaintValue = "runtime-required"

	// maxKeyNameLength is the limit Kubernetes puts on the name part (after
	// the '/') of a label or annotation key.
	maxKeyNameLength = 63

	// MaxSkyhookNameLength leaves room for the longest per-Skyhook key,
	// nodeState_<name>, within maxKeyNameLength.
	MaxSkyhookNameLength = maxKeyNameLength - len("nodeState_")
)

// NodeStateAnnotation is the node annotation key holding the NodeState of the
// named Skyhook.
func NodeStateAnnotation(skyhook string) string { return NodeStatePrefix + skyhook }

// ConfigAnnotation is the node annotation key holding the configMap hashes
// of the named Skyhook's packages.
func ConfigAnnotation(skyhook string) string { return ConfigPrefix + skyhook }

// BatchAnnotation is the node annotation key holding the batch the node
// last started in for the named Skyhook.
func BatchAnnotation(skyhook string) string { return BatchPrefix + skyhook }

// InterruptAnnotation is the node annotation key holding the named
// Skyhook's interrupt in progress on the node.
func InterruptAnnotation(skyhook string) string { return InterruptPrefix + skyhook }

// VersionAnnotation is the node annotation key holding the version of the
// operator that last wrote the named Skyhook's record.
func VersionAnnotation(skyhook string) string { return VersionPrefix + skyhook }

// CordonAnnotation is NodeWright's node annotation key marking a cordon of
// the named Skyhook.
func CordonAnnotation(skyhook string) string { return CordonPrefix + skyhook }

// StatusKey is the node label and annotation key holding the Status of the
// named Skyhook on that node.
func StatusKey(skyhook string) string { return StatusPrefix + skyhook }

// Stage is a step of a package's lifecycle on a node.
type Stage string

// The stages, in the order they can run.
const (
	StageUninstall Stage = "uninstall"
	// StageUninstallInterrupt is the package's interrupt after its
	// uninstall; once it has begun it runs to completion, also when the
	// uninstall is cancelled.
	StageUninstallInterrupt Stage = "uninstall-interrupt"
	StageUpgrade            Stage = "upgrade"
	StageApply              Stage = "apply"
	StageConfig             Stage = "config"
	StageInterrupt          Stage = "interrupt"
	StagePostInterrupt      Stage = "post-interrupt"
)

// State is how a package's current stage stands on a node.
type State string

// The states of a stage.
const (
	StateComplete   State = "complete"
	StateInProgress State = "in_progress"
	StateSkipped    State = "skipped"
	StateErroring   State = "erroring"
	StateUnknown    State = "unknown"
)

// PackageStatus is one package's progress on one node.
type PackageStatus struct {
	// Name of the package.
	Name string `json:"name"`
	// Version of the package.
	Version string `json:"version"`
	// Image the package came from.
	Image string `json:"image"`
	// ContainerSHA is the image digest the stage ran, when the package
	// pins one (spec.packages.<name>.containerSHA).
	ContainerSHA string `json:"containerSHA,omitempty"`
	// Stage the package is in.
	Stage Stage `json:"stage"`
	// State of that stage.
	State State `json:"state,omitempty"`
	// Restarts counts how often the stage has been retried. Left out at 0,
	// as upstream writes it, so a record reads the same from either
	// operator.
	Restarts int32 `json:"restarts,omitempty"`
}

// NodeState is the value of a NodeStateAnnotation: the packages of one Skyhook
// on one node, keyed by NodeStateKey.
type NodeState map[string]PackageStatus

// NodeStateKey is the key of a package version in a NodeState: "name|version".
func NodeStateKey(name, version string) string { return name + "|" + version }
