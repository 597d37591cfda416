package policy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kyverno/kyverno-json/pkg/apis/policy/v1alpha1"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/policies"
)

func defaultSet(t testing.TB) *Set {
	t.Helper()
	files, err := policies.Default()
	if err != nil {
		t.Fatal(err)
	}
	var all []*v1alpha1.ValidatingPolicy
	for name, data := range files {
		ps, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		all = append(all, ps...)
	}
	return NewSet(all...)
}

func skyhook(t testing.TB, packages string) *skyhookv1.Skyhook {
	t.Helper()
	sk := &skyhookv1.Skyhook{}
	if err := yaml.UnmarshalStrict([]byte("metadata: {name: p}\nspec:\n  packages:\n"+packages), sk); err != nil {
		t.Fatal(err)
	}
	return sk
}

func TestDefaultPolicies(t *testing.T) {
	set := defaultSet(t)
	if got := strings.Join(set.Names(), ","); got != "deny-docker-hub,require-registry-host,tenant-node-selectors" {
		t.Fatalf("default policies %s", got)
	}
	enforced, audited := set.Evaluate(context.Background(), skyhook(t, `
    good: {version: 1.0.0, image: ghcr.io/x/good}
    port: {version: 1.0.0, image: "registry.local:5000/x/port"}
    local: {version: 1.0.0, image: "localhost/x"}
    short: {version: 1.0.0, image: ubuntu}
    hub: {version: 1.0.0, image: docker.io/library/ubuntu}
`), nil, Requester{})
	// The shipped policies audit: NodeWright accepts such images.
	if len(enforced) != 0 {
		t.Errorf("enforced by the shipped policies: %v", enforced)
	}
	var got []string
	for _, e := range audited {
		got = append(got, e.Error())
	}
	want := []string{
		"spec.packages.hub.image: Invalid value: \"docker.io/library/ubuntu\": policy deny-docker-hub (Audit), rule no-docker-hub-images: package images from Docker Hub (docker.io) are not allowed",
		// An image without a registry comes from Docker Hub, so both rules object.
		"spec.packages.short.image: Invalid value: \"ubuntu\": policy deny-docker-hub (Audit), rule no-docker-hub-images",
		"spec.packages.short.image: Invalid value: \"ubuntu\": policy require-registry-host (Audit), rule package-image-names-its-registry: the package image must start with a registry host",
	}
	if len(got) != len(want) {
		t.Fatalf("got:\n  %s", strings.Join(got, "\n  "))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("got  %s\nwant %s", got[i], want[i])
		}
	}
}

// An Enforce policy refuses; the annotation takes only Enforce or Audit.
func TestPolicyActions(t *testing.T) {
	const doc = `apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: only-ghcr
  annotations: {skyhook.nvidia.com/validation-failure-action: %s}
spec:
  rules:
  - name: ghcr
    match: {any: [{apiVersion: skyhook.nvidia.com/v1alpha1, kind: Skyhook}]}
    assert: {all: [{check: {~.($packages): {imageRef: {registry: ghcr.io}}}}]}
`
	ps, err := Parse([]byte(fmt.Sprintf(doc, "Enforce")))
	if err != nil {
		t.Fatal(err)
	}
	enforced, audited := NewSet(ps...).Evaluate(context.Background(), skyhook(t, "    x: {version: 1.0.0, image: quay.io/x}\n"), nil, Requester{})
	if len(enforced) != 1 || len(audited) != 0 || !strings.Contains(enforced[0].Error(), "policy only-ghcr, rule ghcr") {
		t.Errorf("Enforce: enforced %v, audited %v", enforced, audited)
	}
	if _, err := Parse([]byte(fmt.Sprintf(doc, "Warn"))); err == nil || !strings.Contains(err.Error(), `metadata.annotations[skyhook.nvidia.com/validation-failure-action]: "Warn" is not Enforce or Audit`) {
		t.Errorf("an unknown action: %v", err)
	}
}

func TestParseRejectsWhatIsNotAPolicy(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"apiVersion: json.kyverno.io/v1alpha1\nkind: ValidatingPolicy\nmetadata: {name: x}\nspec: {rules: []}\n",
		"apiVersion: json.kyverno.io/v1alpha1\nkind: ValidatingPolicy\nspec: {rules: [{name: r}]}\n",
		"apiVersion: json.kyverno.io/v1alpha1\nkind: ValidatingPolicy\nmetadata: {name: x}\nspec: {rulez: []}\n",
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("accepted:\n%s", doc)
		}
	}
}

// The tenant policy with a list filled in: a tenant (by group or by
// ServiceAccount) may select only the nodes of its entry, an admin who
// matches no entry anything; the refusal names the selector.
func TestTenantNodeSelectors(t *testing.T) {
	files, err := policies.Default()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(files["tenant-node-selectors.yaml"]), "      variable: []",
		"      variable:\n      - {group: team-a, nodeLabels: {pool: team-a}}\n      - {serviceAccount: team-b/flux, nodeLabels: {pool: team-b, tier: gpu}}", 1)
	text = strings.Replace(text, "validation-failure-action: Audit", "validation-failure-action: Enforce", 1)
	ps, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	set := NewSet(ps...)
	rollout := func(labels string) *skyhookv1.Skyhook {
		sk := &skyhookv1.Skyhook{}
		if err := yaml.UnmarshalStrict([]byte("metadata: {name: p}\nspec:\n  nodeSelectors: {matchLabels: "+labels+"}\n  packages:\n    x: {version: 1.0.0, image: ghcr.io/x/x}\n"), sk); err != nil {
			t.Fatal(err)
		}
		return sk
	}
	teamA := Requester{Username: "alice", Groups: []string{"system:authenticated", "team-a"}}
	flux := Requester{Username: "system:serviceaccount:team-b:flux", Groups: []string{"system:serviceaccounts"}}
	admin := Requester{Username: "admin", Groups: []string{"system:masters"}}
	for _, tc := range []struct {
		what    string
		who     Requester
		labels  string
		refused bool
	}{
		{"team-a on its pool", teamA, "{pool: team-a, zone: a}", false},
		{"team-a on team-b's pool", teamA, "{pool: team-b}", true},
		{"team-a on every node", teamA, "{}", true},
		{"team-b's ServiceAccount on its pool and tier", flux, "{pool: team-b, tier: gpu}", false},
		{"team-b's ServiceAccount without its tier", flux, "{pool: team-b}", true},
		{"an admin anywhere", admin, "{}", false},
	} {
		enforced, _ := set.Evaluate(context.Background(), rollout(tc.labels), nil, tc.who)
		if refused := len(enforced) > 0; refused != tc.refused {
			t.Errorf("%s: refused %v (%v), want %v", tc.what, refused, enforced, tc.refused)
			continue
		}
		if tc.refused && !strings.Contains(enforced[0].Error(), "spec.nodeSelectors.matchLabels reaches beyond the nodes this requester may disrupt") {
			t.Errorf("%s: %q does not name spec.nodeSelectors.matchLabels", tc.what, enforced[0])
		}
	}
}

// As shipped, with no tenants listed, the tenant policy limits nobody.
func TestTenantNodeSelectorsAsShippedLimitNobody(t *testing.T) {
	sk := &skyhookv1.Skyhook{}
	if err := yaml.UnmarshalStrict([]byte("metadata: {name: p}\nspec:\n  packages:\n    x: {version: 1.0.0, image: ghcr.io/x/x}\n"), sk); err != nil {
		t.Fatal(err) // no nodeSelectors: every node
	}
	for _, who := range []Requester{{}, {Username: "admin", Groups: []string{"system:masters", "system:authenticated"}}, {Username: "system:serviceaccount:team-b:flux"}} {
		enforced, audited := defaultSet(t).Evaluate(context.Background(), sk, nil, who)
		if len(enforced)+len(audited) != 0 {
			t.Errorf("%+v: enforced %v, audited %v; want nothing", who, enforced, audited)
		}
	}
}
