package defaults

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/webhook/validate"
)

const digest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

func TestSkyhookDefaults(t *testing.T) {
	sk := &skyhookv1.Skyhook{}
	if err := yaml.UnmarshalStrict([]byte(`
metadata: {name: d}
spec:
  packages:
    tagged: {version: 1.1.1, image: "registry:5000/pkgs/tagged:1.1.1"}
    plain: {version: "1.2", image: "ghcr.io/x/plain"}
    pinned: {version: 2.0.0, image: "ghcr.io/x/pinned@`+digest+`"}
    wrong-tag: {version: 1.0.1, image: "ghcr.io/x/wrong:1.0.0"}
    own-resources: {version: 1.0.0, image: "ghcr.io/x/own", resources: {cpuRequest: 1, cpuLimit: 2, memoryRequest: 1Gi, memoryLimit: 2Gi}}
`), sk); err != nil {
		t.Fatal(err)
	}
	operatorDefault := &skyhookv1.ResourceRequirements{
		CPURequest: ptr.To(resource.MustParse("100m")), CPULimit: ptr.To(resource.MustParse("500m")),
		MemoryRequest: ptr.To(resource.MustParse("64Mi")), MemoryLimit: ptr.To(resource.MustParse("256Mi")),
	}
	warnings := Skyhook(sk, Options{Resources: operatorDefault})
	if len(warnings) != 1 || warnings[0] != `spec.packages.wrong-tag.image: the tag "1.0.0" disagrees with version "1.0.1"; the version wins and ghcr.io/x/wrong:1.0.1 runs` {
		t.Errorf("warnings %q, want one naming the wrong tag and what runs", warnings)
	}

	if sk.Spec.Priority != 0 {
		t.Errorf("priority %d: the schema defaults an absent priority, and a written 0 is the validator's to refuse", sk.Spec.Priority)
	}
	want := map[string]struct{ name, image, sha string }{
		"tagged":        {"tagged", "registry:5000/pkgs/tagged", ""},
		"plain":         {"plain", "ghcr.io/x/plain", ""},
		"pinned":        {"pinned", "ghcr.io/x/pinned", digest},
		"wrong-tag":     {"wrong-tag", "ghcr.io/x/wrong", ""}, // the version wins
		"own-resources": {"own-resources", "ghcr.io/x/own", ""},
	}
	for key, w := range want {
		p := sk.Spec.Packages[key]
		if p.Name != w.name || p.Image != w.image || p.ContainerSHA != w.sha {
			t.Errorf("%s: name %q image %q containerSHA %q; want %q %q %q", key, p.Name, p.Image, p.ContainerSHA, w.name, w.image, w.sha)
		}
	}
	if r := sk.Spec.Packages["plain"].Resources; r == nil || !equality.Semantic.DeepEqual(*r, *operatorDefault) {
		t.Errorf("plain got resources %v, want the operator default", r)
	}
	if r := sk.Spec.Packages["own-resources"].Resources; r.CPULimit.String() != "2" {
		t.Errorf("own resources replaced: %v", r)
	}
	sk.Spec.Priority = skyhookv1.DefaultPriority // the schema's default, given before admission
	if errs := validate.Skyhook(sk, nil); len(errs) != 0 {
		t.Errorf("after defaulting, want no errors, got %v", errs)
	}
}

func TestDeploymentPolicyDefaults(t *testing.T) {
	dp := &skyhookv1.DeploymentPolicy{}
	if err := yaml.UnmarshalStrict([]byte(`
spec:
  default: {budget: {count: 1}, strategy: {linear: {}}}
  compartments:
  - {name: a, selector: {matchLabels: {a: "1"}}, budget: {count: 1}, strategy: {exponential: {initialBatch: 3}}}
`), dp); err != nil {
		t.Fatal(err)
	}
	DeploymentPolicy(dp)
	lin := dp.Spec.Default.Strategy.Linear
	if *lin.InitialBatch != 1 || *lin.BatchThreshold != 100 || *lin.SafetyLimit != 50 || *lin.Delta != 1 || lin.FailureThreshold != nil {
		t.Errorf("linear defaults: %+v", lin)
	}
	exp := dp.Spec.Compartments[0].Strategy.Exponential
	if *exp.InitialBatch != 3 || *exp.GrowthFactor != 2 {
		t.Errorf("exponential: initialBatch %d growthFactor %d; want the given 3 and the default 2", *exp.InitialBatch, *exp.GrowthFactor)
	}
	if !*dp.Spec.ResetBatchStateOnCompletion {
		t.Error("resetBatchStateOnCompletion not defaulted to true")
	}
}

// Defaulting never panics, and defaulting twice changes nothing more.
func FuzzSkyhookDefaults(f *testing.F) {
	f.Add([]byte(`{"spec":{"packages":{"a":{"version":"1.0","image":"r:5000/a:1.0@` + digest + `","containerSHA":"x"}}}}`))
	f.Add([]byte(`{"spec":{"packages":{"b":{"version":"v2","image":"b:v2"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sk := &skyhookv1.Skyhook{}
		if err := yaml.Unmarshal(data, sk); err != nil {
			return
		}
		Skyhook(sk, Options{})
		once := sk.DeepCopy()
		Skyhook(sk, Options{})
		if !equality.Semantic.DeepEqual(once, sk) {
			t.Fatalf("defaulting is not idempotent:\n%+v\n%+v", once.Spec, sk.Spec)
		}
	})
}
