package webhook

import (
	"context"
	"net/http"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	sigsjson "sigs.k8s.io/json"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/webhook/defaults"
)

// skyhookMutation is the mutating handler for Skyhooks. controller-runtime's
// defaulter marshals the defaulted object and diffs the whole of it against
// the request (jsonpatch.CreatePatch): a fifth of the admission time of a
// ten-package Skyhook. The defaults touch a few known fields, so the patch
// is written for exactly those.
type skyhookMutation struct{ opts Options }

func (m skyhookMutation) Handle(_ context.Context, req admission.Request) admission.Response {
	var sk skyhookv1.Skyhook
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(req.Object.Raw, &sk); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	before := sk.DeepCopy()
	warnings := defaults.Skyhook(&sk, m.opts.Defaults)
	return admission.Patched("", skyhookPatch(before, &sk)...).WithWarnings(warnings...)
}

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
