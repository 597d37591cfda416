package stagepod

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// DefinitionHash identifies what a stage pod runs of a package's
// definition: its image (and digest), env, resources and agent image. A
// pod whose hash the spec no longer gives runs an outdated definition and
// is replaced, as NodeWright replaces such pods. The configMap is left out:
// a change there reruns the config stage instead.
func DefinitionHash(def skyhookv1.Package) string {
	encoded, _ := json.Marshal(struct { // plain data: cannot fail
		Image, ContainerSHA, AgentImage string
		Env                             []corev1.EnvVar
		Resources                       *skyhookv1.ResourceRequirements
	}{def.Image, def.ContainerSHA, def.AgentImageOverride, def.Env, def.Resources})
	sum := sha256.Sum256(encoded)
	return hex.EncodeToString(sum[:8])
}

// ConfigHash identifies a package's configMap content key by key: "key=h"
// for each key in order, comma separated, h a short hash of the key's
// content (ConfigMap keys cannot hold '=' or ','). Equal maps, equal
// strings; the empty map gives "". ChangedKeys tells which keys differ
// between two of them, for configInterrupts.
func ConfigHash(configMap map[string]string) string {
	keys := make([]string, 0, len(configMap))
	for k := range configMap {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		sum := sha256.Sum256([]byte(configMap[k]))
		parts[i] = k + "=" + hex.EncodeToString(sum[:6])
	}
	return strings.Join(parts, ",")
}

// ChangedKeys are the keys added, removed or changed from one ConfigHash
// to another, sorted. A hash it cannot read (an older format) counts every
// key of the other as changed.
func ChangedKeys(from, to string) []string {
	parse := func(h string) map[string]string {
		out := map[string]string{}
		for _, part := range strings.Split(h, ",") {
			if k, v, ok := strings.Cut(part, "="); ok {
				out[k] = v
			}
		}
		return out
	}
	a, b := parse(from), parse(to)
	var changed []string
	for k, v := range b {
		if a[k] != v {
			changed = append(changed, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	return changed
}
