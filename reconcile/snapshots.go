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
// returns all of the Skyhook's snapshots by snapshot.Key.
func (r *SkyhookReconciler) snapshots(ctx context.Context, sk *skyhookv1.Skyhook) (map[string]*corev1.ConfigMap, error) {
	for name, pkg := range sk.Spec.Packages {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: snapshot.Name(sk.Name, name, pkg.Version), Namespace: r.Namespace}}
		_, err := ctrl.CreateOrUpdate(ctx, r.Client, cm, func() error {
			if err := snapshot.Write(cm, sk.Name, name, pkg); err != nil {
				return err
			}
			return ctrl.SetControllerReference(sk, cm, r.Client.Scheme())
		})
		if err != nil {
			return nil, fmt.Errorf("writing the snapshot of package %s %s: %w", name, pkg.Version, err)
		}
	}
	var list corev1.ConfigMapList
	if err := r.Client.List(ctx, &list, client.InNamespace(r.Namespace), client.MatchingLabels{snapshot.SkyhookLabel: sk.Name}); err != nil {
		return nil, err
	}
	return snapshot.Of(list.Items), nil
}

// pruneSnapshots deletes the snapshots of versions the spec no longer
// declares and no node records (recorded holds snapshot.Keys).
func (pass *rolloutPass) pruneSnapshots(ctx context.Context, recorded map[string]bool) error {
	if recorded == nil {
		return nil // a record could not be read: any version may be on that node
	}
	sk := pass.sk
	for key, cm := range pass.snapshots {
		pkg, declared := sk.Spec.Packages[cm.Labels[snapshot.PackageLabel]]
		if recorded[key] || (declared && snapshot.Key(cm.Labels[snapshot.PackageLabel], pkg.Version) == key) {
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
		return *d, configMapOf(*d, snapshot.Name(sk.Name, name, d.Version))
	}
	if cm := snapshots[snapshot.Key(name, step.Version)]; cm != nil {
		if pkg, err := snapshot.Read(cm); err == nil {
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
