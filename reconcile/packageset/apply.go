package packageset

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/packageset/manifests"
)

// Applying a revision's objects (dry run first, then for real), keeping the
// inventory, pruning, and waiting for applied rollouts (Skyhooks and
// NodeWrights).

// apply server-side applies the objects under one field manager, through
// c (the PackageSet's ServiceAccount or the operator); with dryRun only the
// API server judges them (RBAC, schema, admission webhooks, policies). It
// returns every refusal with its file, object and field, and whether any
// was Forbidden (RBAC refused c).
//
// DeploymentPolicies go first, so that a Skyhook of the same revision that
// names one finds it. In the dry run a policy the revision brings does not
// exist yet, and admission refuses a Skyhook naming a missing policy (as
// NodeWright's does): such a Skyhook is judged without the reference, which
// the real apply then checks against the policy just applied.
func (r *Reconciler) apply(ctx context.Context, c client.Client, objects []manifests.Object, dryRun bool) (problems []string, denied bool) {
	newPolicies := map[string]bool{}
	if dryRun {
		newPolicies = r.newPolicies(ctx, c, objects)
	}
	for _, o := range policiesFirst(objects) {
		obj := o.Object.DeepCopy()
		opts := []client.PatchOption{client.FieldOwner(FieldOwner), client.ForceOwnership}
		if dryRun {
			opts = append(opts, client.DryRunAll)
			if policy, _, _ := unstructured.NestedString(obj.Object, "spec", "deploymentPolicy"); newPolicies[policyKey(obj.GetAPIVersion(), policy)] && isRollout(obj) {
				unstructured.RemoveNestedField(obj.Object, "spec", "deploymentPolicy")
			}
		}
		if err := c.Patch(ctx, obj, client.Apply, opts...); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s: %s", o.File, o.Name(), refusal(err)))
			denied = denied || apierrors.IsForbidden(err)
		}
	}
	return problems, denied
}

// policiesFirst orders the DeploymentPolicies before the other objects,
// keeping the files' order otherwise.
func policiesFirst(objects []manifests.Object) []manifests.Object {
	out := append([]manifests.Object(nil), objects...)
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Object.GetKind() == "DeploymentPolicy" && out[j].Object.GetKind() != "DeploymentPolicy"
	})
	return out
}

// newPolicies names the DeploymentPolicies of the revision that the
// cluster does not have yet (policyKey: by group and name).
func (r *Reconciler) newPolicies(ctx context.Context, c client.Client, objects []manifests.Object) map[string]bool {
	out := map[string]bool{}
	for _, o := range objects {
		if o.Object.GetKind() != "DeploymentPolicy" {
			continue
		}
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(o.Object.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKey{Name: o.Object.GetName()}, existing)
		if apierrors.IsNotFound(err) {
			out[policyKey(o.Object.GetAPIVersion(), o.Object.GetName())] = true
		}
	}
	return out
}

// policyKey names a DeploymentPolicy by its apiVersion and name: a rollout
// names a policy of its own group.
func policyKey(apiVersion, name string) string { return apiVersion + "/" + name }

// isRollout reports whether the object is a rollout (Skyhook, NodeWright).
func isRollout(u *unstructured.Unstructured) bool {
	for _, k := range rollouts.Kinds {
		if u.GroupVersionKind() == k.GroupVersionKind {
			return true
		}
	}
	return false
}

// refusal is an API error as its causes (field: rule), or its message.
func refusal(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Details != nil && len(status.Status().Details.Causes) > 0 {
		var parts []string
		for _, c := range status.Status().Details.Causes {
			if c.Field != "" {
				parts = append(parts, c.Field+": "+c.Message)
			} else {
				parts = append(parts, c.Message)
			}
		}
		return strings.Join(parts, ", ")
	}
	return err.Error()
}

// record keeps the inventory of what was applied and, with prune, deletes
// what the previous revision applied and this one does not.
func (r *Reconciler) record(ctx context.Context, c client.Client, ps *skyhookv1.PackageSet, objects []manifests.Object) error {
	inventory := &skyhookv1.ResourceInventory{Entries: []skyhookv1.ResourceRef{}}
	now := map[string]bool{}
	for _, o := range objects {
		ref := inventoryRef(o.Object)
		inventory.Entries = append(inventory.Entries, ref)
		now[ref.ID] = true
	}
	sort.Slice(inventory.Entries, func(i, j int) bool { return inventory.Entries[i].ID < inventory.Entries[j].ID })
	if ps.Spec.Prune && ps.Status.Inventory != nil {
		for _, old := range ps.Status.Inventory.Entries {
			if !now[old.ID] {
				if err := r.delete(ctx, c, old); err != nil {
					return err
				}
				r.event(ps, corev1.EventTypeNormal, "Pruned", "deleted "+old.ID+" (no longer in the set)")
			}
		}
	}
	ps.Status.Inventory = inventory
	return nil
}

// inventoryRef is an object's inventory entry, Flux's ID format.
func inventoryRef(u *unstructured.Unstructured) skyhookv1.ResourceRef {
	gvk := u.GroupVersionKind()
	return skyhookv1.ResourceRef{ID: fmt.Sprintf("%s_%s_%s_%s", u.GetNamespace(), u.GetName(), gvk.Group, gvk.Kind), Version: gvk.Version}
}

// delete deletes an inventory entry's object through c.
func (r *Reconciler) delete(ctx context.Context, c client.Client, ref skyhookv1.ResourceRef) error {
	parts := strings.Split(ref.ID, "_")
	if len(parts) != 4 {
		return nil // not one of ours
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: parts[2], Version: ref.Version, Kind: parts[3]})
	u.SetNamespace(parts[0])
	u.SetName(parts[1])
	return client.IgnoreNotFound(c.Delete(ctx, u))
}

// notReady names the first applied rollout (Skyhook, NodeWright) that is
// not Ready for its current generation, or is empty; c reads them.
func (r *Reconciler) notReady(ctx context.Context, c client.Client, objects []manifests.Object) string {
	for _, o := range objects {
		if !isRollout(o.Object) {
			continue
		}
		k := rolloutKind(o.Object)
		obj := k.New()
		if err := c.Get(ctx, client.ObjectKey{Name: o.Object.GetName()}, obj); err != nil {
			return k.Kind + " " + o.Object.GetName()
		}
		if sk := k.View(obj); !conditions.IsReady(sk) || sk.Status.ObservedGeneration != sk.Generation {
			return k.Kind + " " + o.Object.GetName()
		}
	}
	return ""
}

// rolloutKind is the kind of a rollout's manifest.
func rolloutKind(u *unstructured.Unstructured) *rollouts.Kind {
	for _, k := range rollouts.Kinds {
		if u.GroupVersionKind() == k.GroupVersionKind {
			return k
		}
	}
	return rollouts.Skyhooks
}
