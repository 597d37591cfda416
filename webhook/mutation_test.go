package webhook

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/webhook/defaults"
)

// requirePatchMatchesDefaults applies the hand-written patch to the request
// and checks the result is the defaulted object.
func requirePatchMatchesDefaults(t *testing.T, raw []byte, opts defaults.Options) {
	t.Helper()
	var sk skyhookv1.Skyhook
	// Case-sensitive, as the apiserver and the handler decode.
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &sk); err != nil {
		return
	}
	before := sk.DeepCopy()
	defaults.Skyhook(&sk, opts)
	ops, err := json.Marshal(skyhookPatch(before, &sk))
	if err != nil {
		t.Fatal(err)
	}
	patch, err := jsonpatch.DecodePatch(ops)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := patch.Apply(raw)
	if err != nil {
		t.Fatalf("patch %s does not apply: %v", ops, err)
	}
	var got skyhookv1.Skyhook
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(patched, &got); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got.Spec, sk.Spec) {
		t.Fatalf("patched spec differs from the defaulted one\npatch: %s\ngot:  %+v\nwant: %+v", ops, got.Spec, sk.Spec)
	}
}

func TestSkyhookPatchMatchesDefaults(t *testing.T) {
	raw, err := yaml.YAMLToJSON([]byte(`
metadata: {name: p}
spec:
  packages:
    tagged: {version: 1.1.1, image: "registry:5000/x/tagged:1.1.1"}
    "we~ird/key": {version: 1.0.0, image: "ghcr.io/x/y@sha256:1111111111111111111111111111111111111111111111111111111111111111"}
    plain: {name: plain, version: 1.0.0, image: ghcr.io/x/plain, resources: {cpuRequest: 1, cpuLimit: 1, memoryRequest: 1Mi, memoryLimit: 1Mi}}
`))
	if err != nil {
		t.Fatal(err)
	}
	requirePatchMatchesDefaults(t, raw, defaults.Options{Resources: &skyhookv1.ResourceRequirements{
		CPURequest: ptr.To(resource.MustParse("100m")), CPULimit: ptr.To(resource.MustParse("1")),
		MemoryRequest: ptr.To(resource.MustParse("10Mi")), MemoryLimit: ptr.To(resource.MustParse("20Mi")),
	}})
}

func FuzzSkyhookPatch(f *testing.F) {
	f.Add([]byte(`{"spec":{"priority":0,"packages":{"a/b~c":{"version":"1.0","image":"r:5000/a:1.0"}}}}`))
	f.Add([]byte(`{"spec":{"packages":{"x":{"name":"y","version":"v2","image":"b:v2@sha256:1111111111111111111111111111111111111111111111111111111111111111","containerSHA":"sha256:1111111111111111111111111111111111111111111111111111111111111111"}}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		requirePatchMatchesDefaults(t, raw, defaults.Options{})
	})
}
