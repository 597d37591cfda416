// Package snapshot keeps what each version of a package was declared with:
// the ConfigMap its stage pods mount, and the rest of the package beside it,
// so that what a version ran with stays readable after the spec moved on.
//
// A snapshot is a ConfigMap in the operator's namespace, one per (Skyhook,
// package, version): its data is the package's configMap (the stage pods of
// that version mount it), and an annotation holds the rest of the package
// as JSON. The Skyhook owns it; it goes when no node records the version
// and the spec no longer declares it.
package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Labels and annotations of a snapshot.
const (
	SkyhookLabel      = skyhookv1.MetadataPrefix + "/skyhook"
	PackageLabel      = skyhookv1.MetadataPrefix + "/package"
	VersionAnnotation = skyhookv1.MetadataPrefix + "/version"
	// PackageAnnotation holds the package without its configMap, as JSON.
	PackageAnnotation = skyhookv1.MetadataPrefix + "/package-spec"
)

// Name is the snapshot's name: the Skyhook and package, and a hash of the
// version (versions may hold characters a name may not, like '+').
func Name(skyhook, pkg, version string) string {
	sum := sha256.Sum256([]byte(version))
	return fmt.Sprintf("%s-%s-%s", skyhook, pkg, hex.EncodeToString(sum[:4]))
}

// Key identifies a package version among a Skyhook's snapshots.
func Key(pkg, version string) string { return skyhookv1.NodeStateKey(pkg, version) }

// Write fills cm (named by Name, in the operator's namespace) with pkg.
func Write(cm *corev1.ConfigMap, skyhook, name string, pkg skyhookv1.Package) error {
	rest := pkg
	rest.ConfigMap = nil
	encoded, err := json.Marshal(rest)
	if err != nil {
		return err
	}
	cm.Labels = map[string]string{SkyhookLabel: skyhook, PackageLabel: name}
	cm.Annotations = map[string]string{VersionAnnotation: pkg.Version, PackageAnnotation: string(encoded)}
	cm.Data = pkg.ConfigMap
	return nil
}

// Read returns the package a snapshot holds.
func Read(cm *corev1.ConfigMap) (skyhookv1.Package, error) {
	var pkg skyhookv1.Package
	if err := json.Unmarshal([]byte(cm.Annotations[PackageAnnotation]), &pkg); err != nil {
		return pkg, fmt.Errorf("snapshot %s: annotation %s: %w", cm.Name, PackageAnnotation, err)
	}
	if len(cm.Data) > 0 {
		pkg.ConfigMap = cm.Data
	}
	return pkg, nil
}

// Of indexes a Skyhook's snapshots by Key; unreadable ones are left out
// (their version is then uninstalled with its recorded image only).
func Of(list []corev1.ConfigMap) map[string]*corev1.ConfigMap {
	out := map[string]*corev1.ConfigMap{}
	for i := range list {
		cm := &list[i]
		if cm.Annotations[PackageAnnotation] == "" || !cm.DeletionTimestamp.IsZero() {
			continue
		}
		out[Key(cm.Labels[PackageLabel], cm.Annotations[VersionAnnotation])] = cm
	}
	return out
}
