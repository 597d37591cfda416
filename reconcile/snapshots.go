package reconcile

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/snapshot"
)

// snapshots writes a snapshot of every declared package version and
// returns all of the rollout's snapshots by snapshot.Key.
func (r *SkyhookReconciler) snapshots(ctx context.Context, sk *skyhookv1.Skyhook) (map[string]*corev1.ConfigMap, error) {
	ref := skyhookv1.RefOf(sk)
	// The owner by the kind the view stands for; SetControllerReference
	// would take the view's Go type (a Skyhook) for its kind.
	owner := metav1.NewControllerRef(sk, ref.Kind.GroupVersionKind)
	for name, pkg := range sk.Spec.Packages {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: snapshot.Name(ref, name, pkg.Version), Namespace: r.Namespace}}
		_, err := ctrl.CreateOrUpdate(ctx, r.Client, cm, func() error {
			if err := snapshot.Write(cm, ref, name, pkg); err != nil {
				return err
			}
			cm.OwnerReferences = []metav1.OwnerReference{*owner}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("writing the snapshot of package %s %s: %w", name, pkg.Version, err)
		}
	}
	var list corev1.ConfigMapList
	keys := snapshot.KeysOf(ref.Kind)
	if err := r.Client.List(ctx, &list, client.InNamespace(r.Namespace), client.MatchingLabels{keys.Owner: sk.Name}); err != nil {
		return nil, err
	}
	return keys.Of(list.Items), nil
}

// pruneSnapshots deletes the snapshots of versions the spec no longer
// declares and no node records (recorded holds snapshot.Keys).
func (pass *rolloutPass) pruneSnapshots(ctx context.Context, recorded map[string]bool) error {
	if recorded == nil {
		return nil // a record could not be read: any version may be on that node
	}
	sk, keys := pass.sk, snapshot.KeysOf(pass.ref.Kind)
	for key, cm := range pass.snapshots {
		pkg, declared := sk.Spec.Packages[cm.Labels[keys.Package]]
		if recorded[key] || (declared && snapshot.Key(cm.Labels[keys.Package], pkg.Version) == key) {
			continue
		}
		if err := client.IgnoreNotFound(pass.r.Client.Delete(ctx, cm)); err != nil {
			return err
		}
	}
	return nil
}

// definition is what a stage of the package runs with: the spec's package
// for the declared version; for another version (being uninstalled) its
// snapshot, or, without one, only the image the node recorded. It also
// returns the name of the ConfigMap to mount, empty for none.
func definition(sk *skyhookv1.Skyhook, name string, step lifecycle.Step, snapshots map[string]*corev1.ConfigMap) (skyhookv1.Package, string) {
	if d := declared(sk, name); d != nil && d.Version == step.Version {
		return *d, configMapOf(*d, snapshot.Name(skyhookv1.RefOf(sk), name, d.Version))
	}
	if cm := snapshots[snapshot.Key(name, step.Version)]; cm != nil {
		if pkg, err := snapshot.KeysOf(skyhookv1.KindOf(sk)).Read(cm); err == nil {
			return pkg, configMapOf(pkg, cm.Name)
		}
	}
	return skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Name: name, Version: step.Version}, Image: step.Image}, ""
}

func configMapOf(pkg skyhookv1.Package, name string) string {
	if len(pkg.ConfigMap) == 0 {
		return ""
	}
	return name
}
