// Package reconcile is the Skyhook controller: it rolls a Skyhook's
// packages across the nodes it selects, stage by stage, within its
// interruption budget or DeploymentPolicy. The PackageSet controller is in
// reconcile/packageset; the leaf packages beside this one each hold one
// idea (lifecycle, stagepod, nodestate, budget, compartment, snapshot,
// cordon, drain, interrupt, taints, fleet).
//
// The files, one concept each:
//
//	skyhook_controller.go  Reconcile (get, patch helper with a deferred finalizeStatus,
//	                       finalizer, disable, rollout), watches
//	deletion.go            a deleted Skyhook: uninstall, clean the nodes, drop the finalizer
//	rollout.go             one pass over a Skyhook's nodes (rolloutPass): follow the
//	                       visited nodes, admit waiting ones within the budget, finish
//	fleet_view.go          what the passes know of every node between them (fleetView over
//	                       a fleet.Index), and which nodes a pass visits
//	gather.go              what a pass reads: the visited nodes, their records and stage pods
//	node.go                one node's turn in a pass (nodePass): its packages, stages, retries
//	stagepods.go           finding, creating, reading and deleting stage pods; backoff
//	interrupts.go          a node's interrupt: cordon, drain, run, verify the reboot
//	packages.go            the package lifecycle on a node: order, next step, node status
//	priority.go            ordering between Skyhooks on a shared node
//	policy.go              DeploymentPolicy compartments and batches in a pass, and their reset
//	notready.go            NotReady nodes keep, then give up, their budget slot
//	runtime_required.go    the runtime-required taint
//	snapshots.go           package snapshots: each declared version's ConfigMap
//	status.go              status writing and events: progress, summarise, conditions
//	interrupt_status.go    interrupts in the status: drains held, bare pods evicted, the window
//	memory.go              the operator's memory of its own writes between passes
//	pool.go                the writes of a pass, sent for several nodes at once
//	metrics.go             the rollout gauges, this project's and NodeWright's
//	upstream_status.go     NodeWright's status fields: bounded per-node maps, compartmentStatuses
//	upstream_conditions.go NodeWright's conditions, bare and prefixed
//	uninstall_status.go    explicit uninstall in the status: nodes uninstalling, blocked dependents
//	node_conditions.go     NodeWright's node conditions <skyhook>/NotReady and /Erroring
//	plan.go                PlanRollout: what a rollout would do, for `skyhook plan`
//
// The RBAC markers below are the operator's whole permission set (both
// controllers and the webhooks); `make generate` turns them into
// config/rbac/role.yaml: a ClusterRole for what spans the cluster (nodes,
// reading pods for drains, evictions) and a Role in the operator's
// namespace for its own stage pods, ConfigMaps (package snapshots,
// policies), Secret (webhook certificates) and leader lease. Nothing more:
// test/leastprivilege runs a whole rollout and the chart's cleanup as the
// operator's ServiceAccount with these roles and fails on any 403. Drains
// evict through the Eviction API, which applies PodDisruptionBudgets itself,
// and read a pod's owner from its ownerReferences, so no PodDisruptionBudget
// or workload is read; nodes are only patched; webhook configurations can
// be read, changed and deleted by their two names only (create, list and
// watch cannot be limited by name). TokenReviews and SubjectAccessReviews
// decide who may read the metrics (--metrics-secure). Impersonating
// ServiceAccounts (and reading one, to know it is gone) is how a PackageSet
// applies its objects as the account it names rather than as the operator
// (reconcile/packageset/impersonate.go).
//
// +kubebuilder:rbac:groups=skyhook.nvidia.com,resources=skyhooks;deploymentpolicies;packagesets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=skyhook.nvidia.com,resources=skyhooks/status;deploymentpolicies/status;packagesets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=skyhook.nvidia.com,resources=skyhooks/finalizers;packagesets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",namespace=skyhook-system,resources=pods,verbs=get;list;watch;create;delete;deletecollection
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups="",namespace=skyhook-system,resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",namespace=skyhook-system,resources=secrets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=skyhook-system,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;impersonate
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=list;watch;create
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;update;patch;delete,resourceNames=skyhook-mutating-webhooks;skyhook-validating-webhooks
package reconcile
