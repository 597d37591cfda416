package reconcile

import (
	"context"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/patch"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/fleet"
	"github.com/skyhook-go/skyhook/reconcile/report"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// What the operator writes to a Skyhook's status, and the events it
// records about it: a pass tallies what it found in a report.Progress,
// package report decides what the status says, and finalizeStatus,
// deferred by Reconcile, patches it.

const fieldOwner = "skyhook-operator"

// finalizeStatus ends every reconcile, as Flux's controllers do: it records
// the handled reconcile request, announces a changed summary, and patches
// the rollout's object, unless the cache has not caught up with the last
// patch (RolloutVersions) or only progress counters moved since a write
// less than memory.StatusInterval ago: then it returns how long the write
// waits. before is the view as the reconcile found it.
func (r *SkyhookReconciler) finalizeStatus(ctx context.Context, patcher *patch.SerialPatcher, before *skyhookv1.Skyhook, obj client.Object) (time.Duration, error) {
	k := rollouts.Of(before)
	sk := k.View(obj)
	if v, ok := meta.ReconcileAnnotationValue(sk.GetAnnotations()); ok {
		sk.Status.SetLastHandledReconcileRequest(v) // reconcile.fluxcd.io/requestedAt, as Flux's kinds do
	}
	if r.memory.RolloutVersions.Behind(sk.UID, before.ResourceVersion) {
		// The cache has not caught up with this operator's last write: a
		// patch against this base would leave what that write set where
		// the base and the new status agree. The write's own watch event
		// brings the rollout back, fresh, in a moment; nothing is written
		// or announced now.
		sk.Status = before.Status
		k.Apply(obj, sk)
		return cacheLagRetry, nil
	}
	for _, e := range report.Announcements(before, sk) {
		r.record(sk, e)
	}
	if wait, hold := r.memory.StatusWrites.Hold(before, sk); hold {
		sk.Status = before.Status // nothing to write now; the requeue will
		k.Apply(obj, sk)
		return wait, nil
	}
	k.Apply(obj, sk)
	opts := []patch.Option{patch.WithOwnedConditions{Conditions: report.OwnedConditions(k.RolloutKind)}, patch.WithFieldOwner(fieldOwner)}
	if err := patcher.Patch(ctx, obj, opts...); err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	if sk.DeletionTimestamp.IsZero() || len(sk.Finalizers) > 0 {
		r.memory.StatusWrites.Wrote(sk.UID) // not for a rollout now gone: memory was forgotten for it
	}
	return 0, nil
}

// cacheLagRetry is when a reconcile that found its rollout older in the
// cache than its own last write, and so wrote nothing, runs again at the
// latest: the watch event of that write brings it back sooner.
const cacheLagRetry = 5 * time.Second

// rolloutWriter is the client the status patcher writes the rollout with:
// it notes the resourceVersion each patch returns, so that the next
// reconcile can tell a cached copy that has not caught up with it
// (RolloutVersions). The patch helper sends copies of the object and keeps
// the answers to itself, hence a client that sees them.
func (r *SkyhookReconciler) rolloutWriter(uid types.UID) client.Client {
	return noteWrites{Client: r.Client, note: func(obj client.Object, err error) error {
		gone := obj.GetDeletionTimestamp() != nil && len(obj.GetFinalizers()) == 0 // its memory was forgotten
		if err == nil && !gone {
			r.memory.RolloutVersions.Record(uid, obj.GetResourceVersion())
		}
		return err
	}}
}

// noteWrites passes every patch of the object and of its status to note
// with its outcome.
type noteWrites struct {
	client.Client
	note func(client.Object, error) error
}

func (c noteWrites) Patch(ctx context.Context, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
	return c.note(obj, c.Client.Patch(ctx, obj, p, opts...))
}

func (c noteWrites) Status() client.SubResourceWriter {
	return noteStatusWrites{SubResourceWriter: c.Client.Status(), note: c.note}
}

type noteStatusWrites struct {
	client.SubResourceWriter
	note func(client.Object, error) error
}

func (w noteStatusWrites) Patch(ctx context.Context, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	return w.note(obj, w.SubResourceWriter.Patch(ctx, obj, p, opts...))
}

// reportNodes writes NodeWright's per-node maps from the view, the nodes
// needing attention first, and nodePriority from its started nodes.
func reportNodes(s *skyhookv1.SkyhookStatus, view *fleetView) {
	report.NodeMaps(s, view.Index.Len(fleet.Work), func(yield func(report.NodeEntry) bool) {
		view.byAttention(func(w *nodeWork) bool {
			return yield(report.NodeEntry{Name: w.node.Name, Status: w.now, State: w.record(), BootID: w.node.Status.NodeInfo.BootID})
		})
	})
	var started []string
	for _, status := range []skyhookv1.Status{skyhookv1.StatusInProgress, skyhookv1.StatusErroring} {
		view.Index.Ascend(status, func(name string) bool {
			started = append(started, name)
			return true
		})
	}
	report.NodePriority(s, started, time.Now())
}

// orderNodes gives the visited nodes and the nodes starting in this pass
// (in the order they start, after every node already started) their place
// in the rollout, NodeWright's SKYHOOK_NODE_ORDER (report.Places).
func orderNodes(s *skyhookv1.SkyhookStatus, work, starting []*nodeWork) {
	for i, w := range starting {
		w.order = report.NextPlace(s) + i
	}
	if len(work) == 0 {
		return
	}
	names := make([]string, len(work))
	for i, w := range work {
		names[i] = w.node.Name
	}
	for i, place := range report.Places(s, names) {
		if place >= 0 {
			work[i].order = place
		}
	}
}

// record records an event on the Skyhook.
func (r *SkyhookReconciler) record(sk *skyhookv1.Skyhook, e report.Event) {
	if r.Recorder != nil {
		r.Recorder.Eventf(sk, nil, e.Type, e.Reason, e.Action, "%s", e.Note)
	}
}

// reportReplaced records a Normal event on the Skyhook for a stage pod
// deleted because it runs what the spec no longer declares.
func (r *SkyhookReconciler) reportReplaced(sk *skyhookv1.Skyhook, node string, pod *corev1.Pod) {
	r.Recorder.Eventf(sk, nil, corev1.EventTypeNormal, "StagePodReplaced", "Replace",
		"stage pod %s on node %s runs package %s %s as the spec no longer declares it; it is deleted and its stage starts again with the spec's",
		pod.Name, node, stagepod.PackageOf(pod), pod.Annotations[stagepod.VersionAnnotation])
}

// reportBarePods records a Warning event on the Skyhook for each pod
// without a controller that a drain evicted: nothing recreates it.
func (r *SkyhookReconciler) reportBarePods(sk *skyhookv1.Skyhook, node string, pods []string) {
	for _, pod := range pods {
		r.Recorder.Eventf(sk, nil, corev1.EventTypeWarning, "BarePodEvicted", "Drain",
			"evicted %s from node %s for the interrupt; it has no controller, so nothing recreates it", pod, node)
	}
}
