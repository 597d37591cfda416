package webhook

import (
	"strings"

	"gomodules.xyz/jsonpatch/v2"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// skyhookPatch lists the JSON patch operations that turn before into after
// for the fields package defaults sets.
func skyhookPatch(before, after *skyhookv1.Skyhook) []jsonpatch.Operation {
	var ops []jsonpatch.Operation
	add := func(path string, value any) {
		ops = append(ops, jsonpatch.NewOperation("add", path, value))
	}
	// Only packages get defaults, so a request without a spec (or with no
	// packages) gets no operation.
	for key, a := range after.Spec.Packages {
		b := before.Spec.Packages[key]
		base := "/spec/packages/" + escapePointer(key)
		if a.Name != b.Name {
			add(base+"/name", a.Name)
		}
		if a.Image != b.Image {
			add(base+"/image", a.Image)
		}
		if a.ContainerSHA != b.ContainerSHA {
			add(base+"/containerSHA", a.ContainerSHA)
		}
		if a.Resources != nil && b.Resources == nil {
			add(base+"/resources", a.Resources)
		}
	}
	return ops
}

// escapePointer escapes a map key for a JSON pointer (RFC 6901).
func escapePointer(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
