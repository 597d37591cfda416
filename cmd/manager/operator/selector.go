package operator

import (
	"context"
	"fmt"
	"io"
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/scheme"
)

// SelectorMigrationOptions configure MigrateSelector.
type SelectorMigrationOptions struct {
	// Namespace and Deployment name the operator's Deployment.
	Namespace, Deployment string
	// Release is the Helm release the Deployment must belong to (its
	// meta.helm.sh/release-name annotation): a Deployment of that name
	// that Helm does not manage for this release is never deleted.
	Release string
	// Selector is the Deployment's selector as the chart renders it now.
	Selector map[string]string
	// Poll is how often MigrateSelector looks again while the Deployment
	// is going.
	Poll time.Duration
	// Out gets the progress lines.
	Out io.Writer
}

// helmReleaseAnnotation is where Helm records the release owning an object.
const helmReleaseAnnotation = "meta.helm.sh/release-name"

// MigrateSelector deletes the operator's Deployment when its selector is
// not the one the chart renders now, and waits until it is gone, so that
// the upgrade that follows creates it anew: a Deployment's selector cannot
// change, so Helm would otherwise fail the upgrade. This is what
// NodeWright's selectorMigration pre-upgrade hook does; here it matters when
// a NodeWright release is upgraded to this chart and both name the
// Deployment alike (its fullnameOverride), since NodeWright's selector says
// app.kubernetes.io/name: nodewright. The selector this chart renders has
// never changed, so on its own upgrades this finds nothing to do. The
// operator is down from the deletion until the new Deployment's pods run.
func MigrateSelector(ctx context.Context, cfg *rest.Config, opts SelectorMigrationOptions) error {
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	if opts.Poll == 0 {
		opts.Poll = time.Second
	}
	key := client.ObjectKey{Namespace: opts.Namespace, Name: opts.Deployment}
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, key, dep); apierrors.IsNotFound(err) {
		fmt.Fprintf(opts.Out, "no Deployment %s: nothing to migrate\n", key)
		return nil
	} else if err != nil {
		return err
	}
	if dep.Spec.Selector != nil && len(dep.Spec.Selector.MatchExpressions) == 0 && maps.Equal(dep.Spec.Selector.MatchLabels, opts.Selector) {
		fmt.Fprintf(opts.Out, "Deployment %s: selector unchanged, nothing to migrate\n", key)
		return nil
	}
	if owner := dep.Annotations[helmReleaseAnnotation]; owner != opts.Release {
		// Helm refuses to take over an object of another release (or of
		// none) anyway, naming it; deleting it here would be a guess.
		fmt.Fprintf(opts.Out, "Deployment %s has another selector but belongs to release %q, not %q: left alone\n", key, owner, opts.Release)
		return nil
	}
	fmt.Fprintf(opts.Out, "Deployment %s: selector %v, the chart's is %v; deleting it so the upgrade creates it anew\n",
		key, metav1.FormatLabelSelector(dep.Spec.Selector), opts.Selector)
	uid := dep.UID
	// Background: the Deployment object goes at once (its pods follow), so
	// the upgrade does not find it half deleted; the UID precondition
	// spares a Deployment someone made again meanwhile.
	err = c.Delete(ctx, dep, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &uid})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Deployment %s: %w", key, err)
	}
	for {
		current := &appsv1.Deployment{}
		err := c.Get(ctx, key, current)
		if apierrors.IsNotFound(err) || (err == nil && current.UID != uid) {
			fmt.Fprintf(opts.Out, "Deployment %s deleted\n", key)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the Deployment %s is still there: the migration ran out of time (last read: %v)", key, err)
		case <-time.After(opts.Poll):
		}
	}
}
