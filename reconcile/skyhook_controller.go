package reconcile

import (
	"context"
	"maps"
	"time"

	"github.com/fluxcd/pkg/runtime/patch"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// Finalizer lets the operator uninstall a deleted Skyhook's packages and
// clean its records off the nodes. It is NodeWright's finalizer, so that a
// Skyhook taken over from it is deleted by this operator.
const Finalizer = skyhookv1.MetadataPrefix + "/skyhook"

// legacyFinalizer is the finalizer earlier releases of this operator put on
// Skyhooks; it is replaced by Finalizer.
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
	// StageTimeout bounds one stage pod's run (1 hour when zero): past it
	// the kubelet stops the pod and the stage is erroring, then retried.
	StageTimeout time.Duration
	// RuntimeRequiredTaint is the taint runtimeRequired Skyhooks hold on
	// their nodes (stagepod.DefaultRuntimeRequiredTaint when its key is
	// empty).
	RuntimeRequiredTaint corev1.Taint
	// Parallelism bounds the nodes whose API requests a pass sends at once
	// (16 when zero).
	Parallelism int
	// OperatorVersion is written where NodeWright writes its version: the
	// nodes' version_<skyhook> annotations and the Skyhook's
	// skyhook.nvidia.com/version annotation. Empty writes neither.
	OperatorVersion string
	Recorder        events.EventRecorder

	started      startedNodes
	statusWrites statusWrites
	written      writtenRecords
	batches      batchStates
	records      parsedRecords
	deleted      recentWrites
	created      recentWrites
	stageEnds    stageEnds
	views        fleetViews
}

// Reconcile implements reconcile.Reconciler, Flux style: get, patch helper
// with a deferred status patch, finalizer, suspend (disable/pause), rollout.
func (r *SkyhookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	sk := &skyhookv1.Skyhook{}
	if err := r.Client.Get(ctx, req.NamespacedName, sk); err != nil {
		if apierrors.IsNotFound(err) {
			r.views.drop(req.Name)
			r.views.changes.Forget(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	patcher := patch.NewSerialPatcher(sk, r.Client)
	before := sk.DeepCopy()
	defer func() {
		wait, err := r.finalizeStatus(ctx, patcher, before, sk)
		result.RequeueAfter = minPositive(result.RequeueAfter, wait)
		if err != nil {
			retErr = err
		}
	}()

	if !sk.DeletionTimestamp.IsZero() {
		return r.delete(ctx, sk)
	}
	if adoptFinalizer(sk) || r.stampVersion(sk) || r.resetBatches(sk) {
		return ctrl.Result{Requeue: true}, nil
	}
	if sk.Annotations[skyhookv1.DisableAnnotation] == "true" {
		markDisabled(sk)
		observeStatus(sk.Name, skyhookv1.StatusDisabled)
		return r.markDisabledNodes(ctx, sk)
	}
	return r.rollout(ctx, sk)
}

// stampVersion writes the operator's version on the Skyhook, as NodeWright
// does, and reports whether it changed.
func (r *SkyhookReconciler) stampVersion(sk *skyhookv1.Skyhook) bool {
	if r.OperatorVersion == "" || sk.Annotations[skyhookv1.SkyhookVersionAnnotation] == r.OperatorVersion {
		return false
	}
	if sk.Annotations == nil {
		sk.Annotations = map[string]string{}
	}
	sk.Annotations[skyhookv1.SkyhookVersionAnnotation] = r.OperatorVersion
	return true
}

// SetupWithManager watches Skyhooks, their stage pods, and the nodes.
func (r *SkyhookReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.MaxAttempts == 0 {
		r.MaxAttempts = 5
	}
	if r.Parallelism == 0 {
		r.Parallelism = defaultParallelism
	}
	if r.RuntimeRequiredTaint.Key == "" {
		r.RuntimeRequiredTaint = stagepod.DefaultRuntimeRequiredTaint
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
		r.APIReader = mgr.GetAPIReader()
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podNodeField, func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Node{}, nodeNameField, func(o client.Object) []string {
		return []string{o.GetName()}
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("skyhook").
		For(&skyhookv1.Skyhook{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.skyhookForPod), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == r.Namespace
		}))).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.skyhooksForNode), builder.WithPredicates(nodeChanged)).
		Watches(&skyhookv1.DeploymentPolicy{}, handler.EnqueueRequestsFromMapFunc(r.skyhooksForPolicy)).
		Watches(&skyhookv1.Skyhook{}, handler.EnqueueRequestsFromMapFunc(r.skyhooksAfter)).
		Complete(r)
}

// skyhooksForNode maps a node to the Skyhooks that select it or have a
// record on it.
func (r *SkyhookReconciler) skyhooksForNode(ctx context.Context, o client.Object) []ctrl.Request {
	node, ok := o.(*corev1.Node)
	if !ok {
		return nil
	}
	var list skyhookv1.SkyhookList // read only: no copy of every Skyhook per event
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []ctrl.Request
	for i := range list.Items {
		sk := &list.Items[i]
		_, recorded := node.Annotations[skyhookv1.NodeStateAnnotation(sk.Name)]
		if recorded || selects(sk, node) {
			// Called for the node before and after an update, so a node
			// that leaves the selector is noted too.
			r.views.changes.Node(sk.Name, node.Name)
			reqs = append(reqs, ctrl.Request{NamespacedName: types.NamespacedName{Name: sk.Name}})
		}
	}
	return reqs
}

// skyhookForPod maps a stage pod to the Skyhook that owns it, noting its
// node as changed for that Skyhook's next pass.
func (r *SkyhookReconciler) skyhookForPod(_ context.Context, o client.Object) []ctrl.Request {
	owner := metav1.GetControllerOf(o)
	if owner == nil || owner.Kind != "Skyhook" || owner.APIVersion != skyhookv1.GroupVersion.String() {
		return nil
	}
	if pod, ok := o.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
		r.views.changes.Node(owner.Name, pod.Spec.NodeName)
	}
	return []ctrl.Request{{NamespacedName: types.NamespacedName{Name: owner.Name}}}
}

// skyhooksForPolicy maps a DeploymentPolicy to the Skyhooks that use it.
func (r *SkyhookReconciler) skyhooksForPolicy(ctx context.Context, o client.Object) []ctrl.Request {
	var list skyhookv1.SkyhookList // read only: no copy of every Skyhook per event
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []ctrl.Request
	for _, sk := range list.Items {
		if sk.Spec.DeploymentPolicy == o.GetName() {
			r.views.changes.All(sk.Name)
			reqs = append(reqs, ctrl.Request{NamespacedName: types.NamespacedName{Name: sk.Name}})
		}
	}
	return reqs
}

// nodeChanged lets through node events that can change a rollout: not the
// heartbeats a kubelet (or KWOK) sends every few seconds.
var nodeChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldNode, ok1 := e.ObjectOld.(*corev1.Node)
		newNode, ok2 := e.ObjectNew.(*corev1.Node)
		if !ok1 || !ok2 {
			return true
		}
		return !maps.Equal(oldNode.Labels, newNode.Labels) || !maps.Equal(oldNode.Annotations, newNode.Annotations) ||
			!equality.Semantic.DeepEqual(oldNode.Spec.Taints, newNode.Spec.Taints) ||
			oldNode.Spec.Unschedulable != newNode.Spec.Unschedulable ||
			ready(oldNode) != ready(newNode) || oldNode.Status.NodeInfo.BootID != newNode.Status.NodeInfo.BootID
	},
}
