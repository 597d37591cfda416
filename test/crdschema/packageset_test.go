package crdschema

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/config"
)

func packageSetValidator(t testing.TB) *Validator {
	t.Helper()
	crds, err := config.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		if crd.Spec.Names.Kind == skyhookv1.PackageSetKind {
			v, err := For(crd, skyhookv1.GroupVersion.Version)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatal("no PackageSet CRD")
	return nil
}

// admit judges a PackageSet whose spec is the JSON given, as the apiserver
// would on create.
func admit(t testing.TB, v *Validator, spec []byte) (map[string]any, field.ErrorList, bool) {
	t.Helper()
	var s any
	if err := json.Unmarshal(spec, &s); err != nil {
		return nil, nil, false // the apiserver refuses a body that is not JSON before any schema
	}
	obj := map[string]any{"apiVersion": skyhookv1.GroupVersion.String(), "kind": skyhookv1.PackageSetKind,
		"metadata": map[string]any{"name": "fleet", "namespace": "default"}, "spec": s}
	return obj, v.Validate(obj), true
}

// The in-process judge agrees with the apiserver on the cases
// api/v1alpha1's schema tests put to a real one.
func TestPackageSetAsTheAPIServerJudges(t *testing.T) {
	v := packageSetValidator(t)
	for _, tc := range []struct{ spec, field, rule string }{
		{`{"sourceRef":{"kind":"Bucket","name":"fleet"},"interval":"5m"}`, "spec.sourceRef.kind", `Unsupported value: "Bucket"`},
		{`{"sourceRef":{"kind":"GitRepository","name":"fleet"}}`, "spec.interval", "Required value"},
		{`{"sourceRef":{"kind":"GitRepository","name":"fleet"},"interval":"often"}`, "spec.interval", "should match"},
		{`{"sourceRef":{"kind":"OCIRepository","name":"fleet"},"interval":"5m","path":"../../etc"}`, "spec.path", "path must not contain '..'"},
		{`{"sourceRef":{"kind":"GitRepository","name":"fleet"},"interval":"9999999999h"}`, "spec.interval", "must be at most 2562047h"},
		{`{"sourceRef":{"kind":"GitRepository","name":"fleet"},"interval":"5m","timeout":"99999999999999999999s"}`, "spec.timeout", "must be at most 2562047h"},
	} {
		_, errs, _ := admit(t, v, []byte(tc.spec))
		if !hasError(errs, tc.field, tc.rule) {
			t.Errorf("%s: errors %v; want one on %s saying %q", tc.spec, errs, tc.field, tc.rule)
		}
	}
	if _, errs, _ := admit(t, v, []byte(`{"sourceRef":{"kind":"GitRepository","name":"fleet"},"interval":"1h30m","retryInterval":"0.5s","path":"./clusters/prod"}`)); len(errs) > 0 {
		t.Errorf("a valid PackageSet refused: %v", errs)
	}
}

func hasError(errs field.ErrorList, path, says string) bool {
	for _, e := range errs {
		if e.Field == path && strings.Contains(e.Error(), says) {
			return true
		}
	}
	return false
}

// FuzzPackageSetAdmission puts arbitrary specs through the PackageSet CRD's
// schema and CEL rules, as the apiserver does (a PackageSet has no
// webhook), and checks: every refusal names a field under spec and a
// rule; what is admitted decodes into the Go type as the operator's
// client decodes it (an object the apiserver stores that the operator
// cannot read would stall every PackageSet), and the values the
// reconciler derives from it are sane: spec.path stays inside the
// artifact, the intervals are not negative.
func FuzzPackageSetAdmission(f *testing.F) {
	v := packageSetValidator(f)
	for _, seed := range []string{
		`{"sourceRef":{"kind":"GitRepository","name":"fleet"},"interval":"5m"}`,
		`{"sourceRef":{"kind":"OCIRepository","name":"fleet","namespace":"flux-system","apiVersion":"source.toolkit.fluxcd.io/v1"},"interval":"1h30m","retryInterval":"30s","timeout":"2m","path":"clusters/prod","prune":true,"wait":true,"dependsOn":[{"name":"base"},{"name":"crds","namespace":"infra"}]}`,
		`{"sourceRef":{"kind":"GitRepository","name":"fleet"},"interval":"9999999999h"}`,
		`{"sourceRef":{"kind":"GitRepository","name":"fleet"},"interval":"0s","retryInterval":"0.000000001ms"}`,
		`{"sourceRef":{"kind":"GitRepository","name":"fleet"},"interval":"5m","path":"/.../a/..."}`,
		`{"sourceRef":{"kind":"GitRepository","name":"fleet"},"interval":"5m","path":"\u00ff/./\\\\.."}`,
		`{"sourceRef":{"kind":"Bucket","name":""},"interval":"often","dependsOn":[{}]}`,
		`{"sourceRef":null,"interval":5,"path":["a"],"suspend":"yes"}`,
		`[]`, `null`, `"spec"`, `{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, spec []byte) {
		obj, errs, ok := admit(t, v, spec)
		if !ok {
			return
		}
		for _, e := range errs {
			if e.Field != "spec" && !strings.HasPrefix(e.Field, "spec.") && !strings.HasPrefix(e.Field, "spec[") && !strings.HasPrefix(e.Field, "<nil>") {
				t.Fatalf("a refusal outside spec: %v", e)
			}
			if strings.TrimSpace(e.Error()) == "" || e.Field == "" {
				t.Fatalf("a refusal naming no field or rule: %#v", e)
			}
		}
		if len(errs) > 0 {
			return
		}
		stored, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		ps := &skyhookv1.PackageSet{}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(stored, ps); err != nil {
			t.Fatalf("admitted, and the operator cannot decode it: %v\n%s", err, stored)
		}
		const dir = "/tmp/artifact"
		if root := filepath.Join(dir, filepath.Clean("/"+ps.Spec.Path)); root != dir && !strings.HasPrefix(root, dir+"/") {
			t.Fatalf("spec.path %q leads out of the artifact, to %s", ps.Spec.Path, root)
		}
		if ps.Spec.Interval.Duration < 0 || (ps.Spec.RetryInterval != nil && ps.Spec.RetryInterval.Duration < 0) || (ps.Spec.Timeout != nil && ps.Spec.Timeout.Duration < 0) {
			t.Fatalf("admitted a negative interval: %+v", ps.Spec)
		}
		if k := ps.Spec.SourceRef.Kind; k != "GitRepository" && k != "OCIRepository" {
			t.Fatalf("admitted sourceRef.kind %q", k)
		}
	})
}
