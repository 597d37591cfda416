// Package reconcile is the rollout controller: it rolls a Skyhook's (or a
// NodeWright's) packages across the nodes it selects, stage by stage,
// within its interruption budget or DeploymentPolicy. Both kinds run
// through the same code: a rollout is given its kind (api/rollouts), whose
// metadata prefix, finalizer and annotations name everything it writes,
// and skyhook_manager.go starts one controller per kind. The PackageSet controller is in
// reconcile/packageset; the leaf packages beside this one each hold one
// idea (lifecycle, stagepod, budget, compartment, snapshot, cordon, drain,
// interrupt, taints, fleet, imagevolume: whether a node's stage pods may
// mount their package images; upstreamjob: NodeWright's stage Jobs read as
// stand-in stage pods when taking over from it; retention: stage pods kept
// for their logs, and their sweep), and two hold what the reconciler keeps and
// says: memory (what it remembers between passes, of each Skyhook) and
// report (what the status says, decided from what a pass found). The node
// record's format is api/nodestate.
//
// The files, one concept each:
//
//	skyhook_controller.go  Reconcile: get, patch helper with a deferred finalizeStatus,
//	                       finalizer, disable, rollout
//	skyhook_manager.go     SetupWithManager: the watches, the cache's field indexes, the
//	                       map functions and the node event predicate
//	reconciler.go          SkyhookReconciler: its settings, their defaults, its memory
//	twins.go               a Skyhook and a NodeWright of one name are one rollout: which
//	                       leads, the other reporting its status, the handover of records,
//	                       cordons and stage pods
//	deletion.go            a deleted Skyhook: uninstall, clean the nodes, drop the
//	                       finalizer, forget it
//	pass.go                what a pass carries (rolloutPass) and one node's turn (nodePass)
//	rollout.go             one pass (rollout): follow the visited nodes, admit waiting ones
//	                       within the budget, report
//	admit.go               which waiting nodes start: the budget, the policy's batches, the
//	                       NodeDisruptionBudgets, the Skyhooks that go first; retries last
//	fleet_budget.go        the NodeDisruptionBudgets in a pass: the ledger's answer, the
//	                       slots released
//	yield.go               drain.onTimeout Yield: a node held by workloads gives its slot back
//	fleet_view.go          what the passes know of every node between them (fleetView over
//	                       memory.View and fleet.Index), and what a pass's basis is
//	gather.go              what a pass reads: the visited nodes, their records and stage
//	                       pods; a stand-in read again
//	node_work.go           what the passes know of one node (nodeWork), a stand-in between them
//	node.go                one node's turn (nodePass.advance): its packages and stages
//	stagepods.go           finding, creating, reading, retiring (deleting or keeping) stage pods
//	stagepods_leaving.go   which stage pods leave a node: behind the record, or outdated (a pod
//	                       of several packages, left by an earlier operator, once all are recorded)
//	stage_runs.go          an install's apply and config in one pod (unless PodPerStage): each
//	                       stage's try in a run
//	retries.go             a try that did not succeed: retried after a backoff, given up, or not counted
//	interrupts.go          a node's interrupt: cordon, drain, run, verify the reboot
//	drain_first.go         cordon and drain before the stage of a package that interrupts
//	drains.go              a node's drain before its interrupt: cordon, wait, remove, the
//	                       timeouts, its events, blockers and drainStart_/drainBlocked_ marks
//	packages.go            the package lifecycle on a node: order, next step, node status
//	priority.go            ordering between Skyhooks on a shared node
//	policy.go              DeploymentPolicy compartments and batches in a pass, and their reset
//	notready.go            NotReady nodes keep, then give up, their budget slot
//	runtime_required.go    the runtime-required taint
//	reboots.go             REAPPLY_ON_REBOOT: a node rebooted outside an interrupt starts over
//	snapshots.go           package snapshots: each declared version's ConfigMap
//	node_status.go         the status marks of the nodes no stage runs on in a pass
//	node_writes.go         the writes to nodes: records, NodeWright's node conditions,
//	                       cordon releases, taints
//	pool.go                the pool that sends a pass's writes for several nodes at once
//	status.go              finalizeStatus; the node maps and node order through package
//	                       report; the events
//	metrics.go             this project's rollout metrics (rollout name and kind); the memory
//	                       gauge
//	metrics_nodewright.go  NodeWright's gauges under both its names (nodewright_*, the
//	                       deprecated skyhook_*), and which kind publishes a name's series
//	plan.go                PlanRollout: what a rollout would do, for `skyhook plan`
//	plan_fleet.go          the plan's waves and batches under the NodeDisruptionBudgets
//
// test/layout checks that this map names every file of the package.
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
// +kubebuilder:rbac:groups=skyhook.nvidia.com,resources=imagetrustpolicies;nodedisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=skyhook.nvidia.com,resources=skyhooks/status;deploymentpolicies/status;packagesets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=skyhook.nvidia.com,resources=skyhooks/finalizers;packagesets/finalizers,verbs=update
// +kubebuilder:rbac:groups=nodewright.nvidia.com,resources=nodewrights;deploymentpolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=nodewright.nvidia.com,resources=nodewrights/status;deploymentpolicies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=nodewright.nvidia.com,resources=nodewrights/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",namespace=skyhook-system,resources=pods,verbs=get;list;watch;create;patch;delete;deletecollection
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups=batch,namespace=skyhook-system,resources=jobs,verbs=get;list;watch;delete
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
