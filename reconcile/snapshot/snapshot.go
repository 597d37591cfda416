// Package snapshot keeps what each version of a package was declared with:
// the ConfigMap its stage pods mount, and the rest of the package beside it,
// so that what a version ran with stays readable after the spec moved on.
//
// A snapshot is a ConfigMap in the operator's namespace, one per (rollout,
// package, version): its data is the package's configMap (the stage pods of
// that version mount it), and an annotation holds the rest of the package
// as JSON. The rollout's object (a Skyhook or a NodeWright) owns it; it
// goes when no node records the version and the spec no longer declares
// it. Its labels and annotations are under the prefix of the rollout's
// kind (Keys).
package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Keys are the label and annotation keys of the snapshots of a kind's
// rollouts.
type Keys struct {
	// Owner labels a snapshot with its rollout's name.
	Owner   string
	Package string
	Version string
	// Spec holds the package without its configMap, as JSON.
	Spec string
}

// KeysOf are the keys of the kind's snapshots: skyhook.nvidia.com/skyhook,
// /package, /version and /package-spec for a Skyhook's, the same under
// nodewright.nvidia.com/ (nodewright for the owner) for a NodeWright's.
func KeysOf(kind skyhookv1.RolloutKind) Keys {
	return Keys{Owner: kind.OwnerLabel(), Package: kind.Prefix + "/package", Version: kind.Prefix + "/version", Spec: kind.Prefix + "/package-spec"}
}

// Name is the snapshot's name: the rollout and package, and a hash of the
// version (versions may hold characters a name may not, like '+'); a
// NodeWright's hash also takes its kind, so that a Skyhook of the same name
// has snapshots of its own.
func Name(rollout skyhookv1.RolloutRef, pkg, version string) string {
	hashed := version
	if rollout.Kind != skyhookv1.Skyhooks {
		hashed = rollout.Kind.Kind + "/" + version
	}
	sum := sha256.Sum256([]byte(hashed))
	return fmt.Sprintf("%s-%s-%s", rollout.Name, pkg, hex.EncodeToString(sum[:4]))
}

// Key identifies a package version among a rollout's snapshots.
func Key(pkg, version string) string { return skyhookv1.NodeStateKey(pkg, version) }

// Write fills cm (named by Name, in the operator's namespace) with pkg of
// the rollout.
func Write(cm *corev1.ConfigMap, rollout skyhookv1.RolloutRef, name string, pkg skyhookv1.Package) error {
	keys := KeysOf(rollout.Kind)
	rest := pkg
	rest.ConfigMap = nil
	encoded, err := json.Marshal(rest)
	if err != nil {
		return err
	}
	cm.Labels = map[string]string{keys.Owner: rollout.Name, keys.Package: name}
	cm.Annotations = map[string]string{keys.Version: pkg.Version, keys.Spec: string(encoded)}
	cm.Data = pkg.ConfigMap
	return nil
}

// Read returns the package a snapshot with the keys holds.
func (k Keys) Read(cm *corev1.ConfigMap) (skyhookv1.Package, error) {
	var pkg skyhookv1.Package
	if err := json.Unmarshal([]byte(cm.Annotations[k.Spec]), &pkg); err != nil {
		return pkg, fmt.Errorf("snapshot %s: annotation %s: %w", cm.Name, k.Spec, err)
	}
	if len(cm.Data) > 0 {
		pkg.ConfigMap = cm.Data
	}
	return pkg, nil
}

// Of indexes a rollout's snapshots with the keys by Key; unreadable ones
// are left out (their version is then uninstalled with its recorded image
// only).
func (k Keys) Of(list []corev1.ConfigMap) map[string]*corev1.ConfigMap {
	out := map[string]*corev1.ConfigMap{}
	for i := range list {
		cm := &list[i]
		if cm.Annotations[k.Spec] == "" || !cm.DeletionTimestamp.IsZero() {
			continue
		}
		out[Key(cm.Labels[k.Package], cm.Annotations[k.Version])] = cm
	}
	return out
}
