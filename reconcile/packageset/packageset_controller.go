// Package packageset is the GitOps side of the operator: the PackageSet
// reconciler applies the rollout manifests (Skyhooks, NodeWrights and the
// DeploymentPolicies of both groups) of a Flux GitRepository or
// OCIRepository artifact, all or nothing, and reports
// Flux-compatible conditions. Package manifests (beside it) reads the files.
package packageset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	"github.com/fluxcd/pkg/runtime/predicates"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Finalizer lets the operator prune a deleted PackageSet's objects.
const Finalizer = skyhookv1.MetadataPrefix + "/packageset"

// FieldOwner is the field manager of everything a PackageSet applies.
const FieldOwner = "skyhook-packageset"

// sourceIndex indexes PackageSets by "<kind>/<namespace>/<name>" of their source.
const sourceIndex = ".spec.sourceRef"

// Reasons of the Ready condition besides Flux's meta reasons.
const (
	// ValidationFailedReason: the dry run refused the revision's objects.
	ValidationFailedReason = "ValidationFailed"
	// ApplyFailedReason: the revision could not be applied; either the
	// apply failed after the dry run, or the API server forbade the dry run
	// to the set's ServiceAccount (nothing applied, retried).
	ApplyFailedReason = "ApplyFailed"
	// PruneFailedReason: objects the revision dropped could not be deleted.
	PruneFailedReason = "PruneFailed"
	// AccessDeniedReason: the sourceRef names another namespace while the
	// operator refuses cross-namespace references (Flux's reason for it).
	AccessDeniedReason = "AccessDenied"
)

// Reconciler applies the rollout manifests (see package manifests)
// of a Flux source artifact: all of them, after the API server (and with it
// the admission webhooks) accepted every one in a dry run, or none.
type Reconciler struct {
	// Client is the operator's own: PackageSets, their status and their
	// sources. A set's objects go through Impersonator's clients when the
	// set has a ServiceAccount.
	Client   client.Client
	Recorder events.EventRecorder
	// APIReader reads ServiceAccounts, uncached, to learn whether a deleted
	// set's account is gone.
	APIReader client.Reader
	// Impersonator makes the clients that act as a PackageSet's
	// ServiceAccount; nil when no PackageSet may name one (tests).
	Impersonator *Impersonator
	// DefaultServiceAccount is the ServiceAccount, in the PackageSet's
	// namespace, of sets that name none; empty applies those as the
	// operator itself.
	DefaultServiceAccount string
	// AllowCrossNamespaceRefs lets a sourceRef name another namespace
	// (the operator's --no-cross-namespace-refs=false).
	AllowCrossNamespaceRefs bool
	// HostnameOverwrite replaces the host of artifact URLs (to reach
	// source-controller from outside the cluster); empty keeps it.
	HostnameOverwrite string
}

// Reconcile reads top to bottom, as Flux's controllers do: get, patch helper
// with a deferred status patch, finalizer, suspend, dependencies, source,
// apply.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	ps := &skyhookv1.PackageSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, ps); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	patcher := patch.NewSerialPatcher(ps, r.Client)
	defer func() {
		if v, ok := meta.ReconcileAnnotationValue(ps.GetAnnotations()); ok {
			ps.Status.SetLastHandledReconcileRequest(v)
		}
		if conditions.IsReady(ps) || conditions.IsStalled(ps) {
			ps.Status.ObservedGeneration = ps.Generation
		}
		opts := []patch.Option{patch.WithOwnedConditions{Conditions: []string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition}},
			patch.WithFieldOwner(FieldOwner)}
		if err := patcher.Patch(ctx, ps, opts...); err != nil && !apierrors.IsNotFound(err) {
			retErr = errors.Join(retErr, err)
		}
		if ps.DeletionTimestamp.IsZero() {
			observe(ps)
		}
	}()

	if !ps.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, ps)
	}
	if !controllerutil.ContainsFinalizer(ps, Finalizer) {
		controllerutil.AddFinalizer(ps, Finalizer)
		return ctrl.Result{Requeue: true}, nil
	}
	if ps.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	if refused := r.crossNamespaceRef(ps); refused != "" {
		r.stall(ps, AccessDeniedReason, refused)
		return ctrl.Result{}, nil // the spec or the operator's flag must change first
	}
	retry := retryInterval(ps)
	applier, err := r.applier(ps)
	if err != nil {
		r.fail(ps, ApplyFailedReason, "%v", err)
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	if waiting := r.dependencyNotReady(ctx, ps); waiting != "" {
		r.fail(ps, meta.DependencyNotReadyReason, "dependency %s is not ready", waiting)
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	artifact, err := r.artifact(ctx, ps)
	if err != nil {
		r.fail(ps, meta.ArtifactFailedReason, "%v", err)
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	// spec.timeout bounds the fetch and the applies (not the deferred
	// status patch, which keeps ctx).
	work, cancel := context.WithCancel(ctx)
	if ps.Spec.Timeout != nil && ps.Spec.Timeout.Duration > 0 {
		work, cancel = context.WithTimeout(ctx, ps.Spec.Timeout.Duration)
	}
	defer cancel()
	conditions.MarkReconciling(ps, meta.ProgressingReason, "reconciling revision %s", artifact.Revision)
	ps.Status.LastAttemptedRevision = artifact.Revision
	objects, problems, err := r.fetch(work, ps, artifact)
	if err != nil {
		r.fail(ps, meta.ArtifactFailedReason, "%v", err)
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	denied := false
	if len(problems) == 0 {
		problems, denied = r.apply(work, applier, objects, true) // all judged before any is applied
	}
	if len(problems) > 0 {
		r.reject(ps, artifact.Revision, problems, denied)
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	if problems, _ := r.apply(work, applier, objects, false); len(problems) > 0 {
		r.fail(ps, ApplyFailedReason, "revision %s: %s", artifact.Revision, summarize(problems))
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	if err := r.record(work, applier, ps, objects); err != nil {
		r.fail(ps, PruneFailedReason, "revision %s was applied, pruning failed: %v", artifact.Revision, err)
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	ps.Status.LastAppliedRevision = artifact.Revision
	if ps.Spec.Wait {
		if notReady := r.notReady(ctx, applier, objects); notReady != "" {
			conditions.MarkFalse(ps, meta.ReadyCondition, meta.ProgressingReason, "applied revision %s; waiting for %s", artifact.Revision, notReady)
			return ctrl.Result{RequeueAfter: retry}, nil
		}
	}
	conditions.Delete(ps, meta.ReconcilingCondition)
	conditions.Delete(ps, meta.StalledCondition)
	conditions.MarkTrue(ps, meta.ReadyCondition, meta.ReconciliationSucceededReason, "Applied revision: %s", artifact.Revision)
	return ctrl.Result{RequeueAfter: ps.Spec.Interval.Duration}, nil
}

// problemsBudget bounds the problems written into a condition message,
// whose limit is 32 KiB: an artifact with thousands of bad manifests would
// otherwise make the status write itself fail.
const problemsBudget = 16 << 10

// summarize joins problems with "; " while they fit problemsBudget, and
// says how many more there are.
func summarize(problems []string) string {
	var b strings.Builder
	for i, p := range problems {
		if i > 0 && b.Len()+len(p)+2 > problemsBudget {
			fmt.Fprintf(&b, "; and %d more", len(problems)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		if len(p) > problemsBudget {
			p = p[:problemsBudget] + "…"
		}
		b.WriteString(p)
	}
	return b.String()
}

// fail marks the PackageSet not ready for a reason that may pass.
func (r *Reconciler) fail(ps *skyhookv1.PackageSet, reason, format string, args ...any) {
	conditions.MarkFalse(ps, meta.ReadyCondition, reason, format, args...)
	r.event(ps, corev1.EventTypeWarning, reason, fmt.Sprintf(format, args...))
	countFailure(ps, reason)
}

// reject reports a revision whose manifests were refused: nothing of it
// was applied and the last good revision stays. A revision refused as
// invalid waits for a new one (Stalled); one the API server forbade
// (denied: the ServiceAccount lacks RBAC) is retried, since granting the
// account fixes it.
func (r *Reconciler) reject(ps *skyhookv1.PackageSet, revision string, problems []string, denied bool) {
	msg := fmt.Sprintf("revision %s was not applied (%d problems; %s stays): %s", revision, len(problems),
		orNone(ps.Status.LastAppliedRevision), summarize(problems))
	if denied {
		conditions.Delete(ps, meta.StalledCondition)
		r.fail(ps, ApplyFailedReason, "%s", msg)
		return
	}
	r.stall(ps, ValidationFailedReason, msg)
}

// stall marks the PackageSet not ready for a reason that stays until its
// spec, its source or the operator changes.
func (r *Reconciler) stall(ps *skyhookv1.PackageSet, reason, msg string) {
	conditions.Delete(ps, meta.ReconcilingCondition)
	conditions.MarkStalled(ps, reason, "%s", msg)
	conditions.MarkFalse(ps, meta.ReadyCondition, reason, "%s", msg)
	r.event(ps, corev1.EventTypeWarning, reason, msg)
	countFailure(ps, reason)
}

// crossNamespaceRef says why the sourceRef or a dependsOn entry may not be
// read, or is empty. A dependency's Ready condition tells a tenant about
// another namespace's set, so it is held to the same rule, as Flux does.
func (r *Reconciler) crossNamespaceRef(ps *skyhookv1.PackageSet) string {
	if r.AllowCrossNamespaceRefs {
		return ""
	}
	const rule = "cross-namespace references are not allowed (the operator runs with --no-cross-namespace-refs)"
	if ref := ps.Spec.SourceRef; ref.Namespace != "" && ref.Namespace != ps.Namespace {
		return fmt.Sprintf("spec.sourceRef.namespace %q: %s: the %s must be in the PackageSet's namespace %q",
			ref.Namespace, rule, ref.Kind, ps.Namespace)
	}
	for i, dep := range ps.Spec.DependsOn {
		if dep.Namespace != "" && dep.Namespace != ps.Namespace {
			return fmt.Sprintf("spec.dependsOn[%d].namespace %q: %s: the PackageSet %s must be in the namespace %q",
				i, dep.Namespace, rule, dep.Name, ps.Namespace)
		}
	}
	return ""
}

func orNone(revision string) string {
	if revision == "" {
		return "nothing applied before"
	}
	return "revision " + revision
}

func (r *Reconciler) event(ps *skyhookv1.PackageSet, kind, reason, note string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(ps, nil, kind, reason, "Reconcile", "%s", note)
	}
}

func retryInterval(ps *skyhookv1.PackageSet) time.Duration {
	if ps.Spec.RetryInterval != nil && ps.Spec.RetryInterval.Duration > 0 {
		return ps.Spec.RetryInterval.Duration
	}
	return ps.Spec.Interval.Duration
}

// dependencyNotReady names the first PackageSet of dependsOn that is not
// Ready for its current generation, or is empty.
func (r *Reconciler) dependencyNotReady(ctx context.Context, ps *skyhookv1.PackageSet) string {
	for _, dep := range ps.Spec.DependsOn {
		ns := dep.Namespace
		if ns == "" {
			ns = ps.Namespace
		}
		other := &skyhookv1.PackageSet{}
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: dep.Name}, other); err != nil ||
			!conditions.IsReady(other) || other.Status.ObservedGeneration != other.Generation {
			return ns + "/" + dep.Name
		}
	}
	return ""
}

// finalize prunes the set's objects when it prunes, then lets it go. The
// ServiceAccount the set applied as deletes them; when that account is
// gone, they stay (a Warning event lists them) rather than keeping the set,
// and its namespace, from being deleted.
func (r *Reconciler) finalize(ctx context.Context, ps *skyhookv1.PackageSet) error {
	if ps.Spec.Prune && ps.Status.Inventory != nil && !ps.Spec.Suspend {
		applier, err := r.applier(ps)
		if err != nil {
			return err
		}
		if gone := r.accountGone(ctx, ps); gone != "" {
			ids := make([]string, len(ps.Status.Inventory.Entries))
			for i, ref := range ps.Status.Inventory.Entries {
				ids[i] = ref.ID
			}
			r.event(ps, corev1.EventTypeWarning, "PruneSkipped", fmt.Sprintf("%s is gone, so nothing is pruned; these objects stay: %s", gone, strings.Join(ids, ", ")))
		} else {
			for _, ref := range ps.Status.Inventory.Entries {
				if err := r.delete(ctx, applier, ref); err != nil {
					return err
				}
			}
		}
	}
	controllerutil.RemoveFinalizer(ps, Finalizer)
	forget(ps)
	return nil
}

// SetupWithManager watches PackageSets, their sources (only a new artifact
// revision counts) and the rollouts they applied (for wait).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &skyhookv1.PackageSet{}, sourceIndex, func(o client.Object) []string {
		ps := o.(*skyhookv1.PackageSet)
		ns := ps.Spec.SourceRef.Namespace
		if ns == "" {
			ns = ps.Namespace
		}
		return []string{ps.Spec.SourceRef.Kind + "/" + ns + "/" + ps.Spec.SourceRef.Name}
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("packageset").
		For(&skyhookv1.PackageSet{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicates.ReconcileRequestedPredicate{}))).
		Watches(&sourcev1.GitRepository{}, handler.EnqueueRequestsFromMapFunc(r.forSource(sourcev1.GitRepositoryKind)),
			builder.WithPredicates(SourceRevisionChanged{})).
		Watches(&sourcev1.OCIRepository{}, handler.EnqueueRequestsFromMapFunc(r.forSource(sourcev1.OCIRepositoryKind)),
			builder.WithPredicates(SourceRevisionChanged{})).
		Watches(&skyhookv1.Skyhook{}, handler.EnqueueRequestsFromMapFunc(r.forRollout(rollouts.Skyhooks))).
		Watches(&nodewrightv1.NodeWright{}, handler.EnqueueRequestsFromMapFunc(r.forRollout(rollouts.NodeWrights))).
		Complete(r)
}

// forSource maps a source to the PackageSets that use it.
func (r *Reconciler) forSource(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		var list skyhookv1.PackageSetList
		if err := r.Client.List(ctx, &list, client.MatchingFields{sourceIndex: kind + "/" + o.GetNamespace() + "/" + o.GetName()}); err != nil {
			return nil
		}
		reqs := make([]ctrl.Request, len(list.Items))
		for i := range list.Items {
			reqs[i] = ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
		}
		return reqs
	}
}

// forRollout maps a rollout of the kind to the waiting PackageSets that
// applied it.
func (r *Reconciler) forRollout(k *rollouts.Kind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []ctrl.Request {
		return r.waitingFor(ctx, "_"+o.GetName()+"_"+k.Group+"_"+k.Kind)
	}
}

// waitingFor are the waiting PackageSets whose inventory holds id.
func (r *Reconciler) waitingFor(ctx context.Context, id string) []ctrl.Request {
	var list skyhookv1.PackageSetList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	var reqs []ctrl.Request
	for i := range list.Items {
		ps := &list.Items[i]
		if !ps.Spec.Wait || ps.Status.Inventory == nil {
			continue
		}
		for _, e := range ps.Status.Inventory.Entries {
			if e.ID == id {
				reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ps)})
			}
		}
	}
	return reqs
}

// SourceRevisionChanged lets through a source's update only when its
// artifact revision changed (a source's status moves often otherwise).
type SourceRevisionChanged struct {
	predicate.Funcs
}

// Update implements predicate.Predicate.
func (SourceRevisionChanged) Update(e event.UpdateEvent) bool {
	type withArtifact interface{ GetArtifact() *meta.Artifact }
	oldSrc, ok1 := e.ObjectOld.(withArtifact)
	newSrc, ok2 := e.ObjectNew.(withArtifact)
	if !ok1 || !ok2 || newSrc.GetArtifact() == nil {
		return false
	}
	return oldSrc.GetArtifact() == nil || oldSrc.GetArtifact().Revision != newSrc.GetArtifact().Revision
}
