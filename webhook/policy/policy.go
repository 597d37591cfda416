// Package policy evaluates image and package policies, written as kyverno-json
// ValidatingPolicy documents, against Skyhooks, and reports each violation
// as a field error naming the policy and the rule.
//
// Policies see the Skyhook as stored and a binding $packages: its packages as
// a list sorted by name, each with its name and imageRef, the image parsed
// ({registry, repository, tag, digest, explicitRegistry}; registry is
// index.docker.io for an image that names none), so that policies compare
// facts instead of re-parsing image strings. A violation under $packages[i]
// is reported on spec.packages.<name of i> (imageRef on its image), so
// admins read the package that broke the rule, not a list index.
package policy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kyverno/kyverno-json/pkg/apis/policy/v1alpha1"
	jsonengine "github.com/kyverno/kyverno-json/pkg/json-engine"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/api/imageref"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Parse reads the ValidatingPolicy documents of a YAML stream. kyverno-json's
// own loader is not used: it pulls kubectl-validate, which does not build
// against current Kubernetes libraries.
func Parse(data []byte) ([]*v1alpha1.ValidatingPolicy, error) {
	var out []*v1alpha1.ValidatingPolicy
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var probe map[string]any
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(probe) == 0 { // only comments
			continue
		}
		p := &v1alpha1.ValidatingPolicy{}
		if err := yaml.UnmarshalStrict(doc, p); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if p.APIVersion != "json.kyverno.io/v1alpha1" || p.Kind != "ValidatingPolicy" {
			return nil, fmt.Errorf("document %d: want apiVersion json.kyverno.io/v1alpha1 and kind ValidatingPolicy, got %q %q", i, p.APIVersion, p.Kind)
		}
		if p.Name == "" {
			return nil, fmt.Errorf("document %d: metadata.name is required", i)
		}
		if len(p.Spec.Rules) == 0 {
			return nil, fmt.Errorf("policy %s: no rules", p.Name)
		}
		if _, err := ActionOf(p); err != nil {
			return nil, fmt.Errorf("policy %s: %w", p.Name, err)
		}
		out = append(out, p)
	}
}

// ActionAnnotation sets what a policy's violation does, with the values of
// Kyverno's validationFailureAction: Enforce (the default) refuses the
// Skyhook; Audit admits it with a warning and an event. kyverno-json's
// ValidatingPolicy has no field for it, so it is an annotation.
const ActionAnnotation = skyhookv1.MetadataPrefix + "/validation-failure-action"

// Action is a policy's validation failure action.
type Action string

// The actions.
const (
	Enforce Action = "Enforce"
	Audit   Action = "Audit"
)

// ActionOf is the policy's action; an unknown value is an error naming the
// annotation and the values it takes.
func ActionOf(p *v1alpha1.ValidatingPolicy) (Action, error) {
	switch a := Action(p.Annotations[ActionAnnotation]); a {
	case "", Enforce:
		return Enforce, nil
	case Audit:
		return Audit, nil
	default:
		return "", fmt.Errorf("metadata.annotations[%s]: %q is not Enforce or Audit", ActionAnnotation, a)
	}
}

// Set is an immutable set of policies, evaluated in name order.
type Set struct {
	policies []*v1alpha1.ValidatingPolicy
}

// NewSet makes a Set; a later policy replaces an earlier one of the same name.
func NewSet(policies ...*v1alpha1.ValidatingPolicy) *Set {
	byName := map[string]*v1alpha1.ValidatingPolicy{}
	for _, p := range policies {
		byName[p.Name] = p
	}
	s := &Set{}
	for _, p := range byName {
		s.policies = append(s.policies, p)
	}
	sort.Slice(s.policies, func(i, j int) bool { return s.policies[i].Name < s.policies[j].Name })
	return s
}

// Names lists the policies of the set.
func (s *Set) Names() []string {
	names := make([]string, len(s.policies))
	for i, p := range s.policies {
		names[i] = p.Name
	}
	return names
}

var engine = jsonengine.New()

// Requester is who asks for the rollout, as the apiserver authenticated
// them: policies see it as $requester, with username, groups and
// serviceAccount ("namespace/name" for a ServiceAccount, such as the one a
// PackageSet impersonates; "" otherwise).
type Requester struct {
	Username string
	Groups   []string
}

// binding is $requester.
func (r Requester) binding() map[string]any {
	groups := make([]any, len(r.Groups))
	for i, g := range r.Groups {
		groups[i] = g
	}
	sa := ""
	if rest, ok := strings.CutPrefix(r.Username, "system:serviceaccount:"); ok {
		if ns, name, found := strings.Cut(rest, ":"); found {
			sa = ns + "/" + name
		}
	}
	return map[string]any{"username": r.Username, "groups": groups, "serviceAccount": sa}
}

// Evaluate runs every policy against sk and returns, as field errors, the
// violations of Enforce policies and the rules that could not be evaluated
// (enforced), and the violations of Audit policies (audited). raw is sk as
// JSON when the caller has it (an admission request), which saves encoding
// it again.
func (s *Set) Evaluate(ctx context.Context, sk *skyhookv1.Skyhook, raw []byte, who Requester) (enforced, audited field.ErrorList) {
	if len(s.policies) == 0 {
		return nil, nil
	}
	resource, names, err := payload(sk, raw)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), err)}, nil
	}
	packages := packagesBinding(resource, names)
	resp := engine.Run(ctx, jsonengine.Request{
		Resource: resource,
		Policies: s.policies,
		Bindings: map[string]any{"packages": packages, "requester": who.binding()},
	})
	for _, pr := range resp.Policies {
		action, _ := ActionOf(pr.Policy) // Parse refused unknown actions
		for _, rr := range pr.Rules {
			origin := fmt.Sprintf("policy %s, rule %s", pr.Policy.Name, rr.Rule.Name)
			if action == Audit {
				origin = fmt.Sprintf("policy %s (Audit), rule %s", pr.Policy.Name, rr.Rule.Name)
			}
			if rr.Error != nil {
				enforced = append(enforced, field.InternalError(field.NewPath("spec"), fmt.Errorf("%s could not be evaluated: %w", origin, rr.Error)))
			}
			for _, v := range rr.Violations {
				for _, fe := range v.ErrorList {
					msg := origin
					if v.Message != "" {
						msg += ": " + v.Message
					}
					path, value := fieldPath(fe.Field, names, packages)
					if value == nil {
						value = fe.BadValue
					}
					if action == Audit {
						audited = append(audited, field.Invalid(path, value, msg))
					} else {
						enforced = append(enforced, field.Invalid(path, value, msg))
					}
				}
			}
		}
	}
	return enforced, audited
}

// payload is the Skyhook as generic JSON, and its package names sorted.
func payload(sk *skyhookv1.Skyhook, raw []byte) (map[string]any, []string, error) {
	if raw == nil {
		var err error
		if raw, err = json.Marshal(sk); err != nil {
			return nil, nil, err
		}
	}
	var resource map[string]any
	if err := json.Unmarshal(raw, &resource); err != nil {
		return nil, nil, err
	}
	if resource["apiVersion"] == nil { // typed objects decoded by clients lose it
		resource["apiVersion"] = skyhookv1.GroupVersion.String()
		resource["kind"] = skyhookv1.SkyhookKind
	}
	names := make([]string, 0, len(sk.Spec.Packages))
	for n := range sk.Spec.Packages {
		names = append(names, n)
	}
	sort.Strings(names)
	return resource, names, nil
}

// packagesBinding is $packages: the packages sorted by name, each with its
// map key as name.
func packagesBinding(resource map[string]any, names []string) []any {
	spec, _ := resource["spec"].(map[string]any)
	pkgs, _ := spec["packages"].(map[string]any)
	out := make([]any, 0, len(names))
	for _, n := range names {
		p, _ := pkgs[n].(map[string]any)
		entry := map[string]any{"name": n}
		for k, v := range p {
			entry[k] = v
		}
		if image, ok := p["image"].(string); ok {
			if ref, err := imageref.Parse(image); err == nil {
				entry["imageRef"] = map[string]any{
					"registry": ref.Registry, "repository": ref.Repository, "tag": ref.Tag,
					"digest": ref.Digest, "explicitRegistry": ref.ExplicitRegistry,
				}
			}
		}
		out = append(out, entry)
	}
	return out
}

// plainPath is a violation's path in the object, up to its first
// expression: "all[0].check.spec.nodeSelectors.(length($mine) ...)" is
// spec.nodeSelectors.
func plainPath(p string) *field.Path {
	if _, check, found := strings.Cut(p, ".check."); found {
		p = check // the assertion's own place in the policy, "all[0].check.", goes
	}
	if cut := strings.IndexAny(p, "(~"); cut >= 0 {
		p = p[:cut]
	}
	p = strings.Trim(p, ".")
	if p == "" {
		return field.NewPath("spec")
	}
	parts := strings.Split(p, ".")
	return field.NewPath(parts[0], parts[1:]...)
}

// packageIndex finds "$packages)[i]" in a violation's path.
var packageIndex = regexp.MustCompile(`\$packages\)\[(\d+)\]`)

// fieldPath turns a violation's path into the Skyhook field it is about, and
// the value there. A path through $packages[i] becomes spec.packages.<name>
// followed by the plain fields the check descended into before its first
// expression: "~.($packages)[2].image.(regex_match(...))" is
// spec.packages.<third name>.image.
func fieldPath(p string, names []string, packages []any) (*field.Path, any) {
	m := packageIndex.FindStringSubmatch(p)
	i, err := 0, error(nil)
	if m != nil {
		i, err = strconv.Atoi(m[1])
	}
	if m == nil || err != nil || i >= len(names) {
		return plainPath(p), nil
	}
	out := field.NewPath("spec", "packages", names[i])
	var value any = packages[i]
	rest := p[strings.Index(p, m[0])+len(m[0]):]
	if cut := strings.IndexAny(rest, "(~"); cut >= 0 {
		rest = rest[:cut]
	}
	for _, part := range strings.Split(rest, ".") {
		if part == "" {
			continue
		}
		obj, _ := value.(map[string]any)
		if part == "imageRef" { // facts about the image are reported on it
			return out.Child("image"), obj["image"]
		}
		out = out.Child(part)
		value = obj[part]
	}
	return out, value
}
