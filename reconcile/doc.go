// Package reconcile holds the operator's controllers: the node lifecycle
// reconciler for Skyhooks and the PackageSet reconciler for Flux sources.
//
// The RBAC markers below are the operator's whole permission set; `make
// generate` turns them into config/rbac/role.yaml: a ClusterRole for what
// spans the cluster (nodes, reading pods for drains, evictions) and a Role
// in the operator's namespace for its own stage pods, ConfigMaps (package
// snapshots, policies), Secret (webhook certificates) and leader lease.
//
// +kubebuilder:rbac:groups=skyhook.nvidia.com,resources=skyhooks;deploymentpolicies;packagesets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=skyhook.nvidia.com,resources=skyhooks/status;deploymentpolicies/status;packagesets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=skyhook.nvidia.com,resources=skyhooks/finalizers;packagesets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",namespace=skyhook-system,resources=pods,verbs=get;list;watch;create;delete;deletecollection
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups="",namespace=skyhook-system,resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",namespace=skyhook-system,resources=secrets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=daemonsets;replicasets;statefulsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=skyhook-system,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations;mutatingwebhookconfigurations,verbs=get;list;watch;create;update;patch
package reconcile
