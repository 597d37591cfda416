// Package validate checks Skyhook and DeploymentPolicy objects beyond what
// their CRD schema can: semantic versions, images, the dependency graph,
// selectors, tolerations, references. Every check runs, and every problem is
// returned as a field.Error with its path, so that an admin sees all of them
// at once.
package validate

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skyhook-go/skyhook/api/imageref"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// PackageName is the rule for package names (map keys and name fields).
var PackageName = regexp.MustCompile(`^[a-z][-a-z0-9]{0,41}[a-z]$`)

// PolicyExists reports whether a DeploymentPolicy of that name exists.
type PolicyExists func(name string) (bool, error)

// Skyhook returns every problem of sk, a Skyhook or the view of a
// NodeWright (NodeWright adds the rules of that kind). policyExists may be
// nil to skip the check of spec.deploymentPolicy.
func Skyhook(sk *skyhookv1.Skyhook, policyExists PolicyExists) field.ErrorList {
	var errs field.ErrorList
	if n := len(sk.Name); n > skyhookv1.MaxSkyhookNameLength {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), sk.Name, fmt.Sprintf(
			"may have at most %d characters (has %d), so that the node keys %s/nodeState_<name> fit 63 characters",
			skyhookv1.MaxSkyhookNameLength, n, skyhookv1.KindOf(sk).Prefix)))
	}
	spec := field.NewPath("spec")
	errs = append(errs, budget(sk.Spec, spec)...)
	errs = append(errs, policyReference(sk.Spec.DeploymentPolicy, spec.Child("deploymentPolicy"), policyExists)...)
	if sk.Spec.Priority < 1 { // an absent priority has the schema's default by now
		errs = append(errs, field.Invalid(spec.Child("priority"), sk.Spec.Priority, "must be at least 1"))
	}
	errs = append(errs, selector(&sk.Spec.NodeSelector, spec.Child("nodeSelectors"))...)
	errs = append(errs, selector(&sk.Spec.PodNonInterruptLabels, spec.Child("podNonInterruptLabels"))...)
	errs = append(errs, tolerations(sk.Spec.AdditionalTolerations, spec.Child("additionalTolerations"))...)
	errs = append(errs, drainConfig(sk.Spec, spec.Child("drainConfig"))...)
	errs = append(errs, packages(sk.Spec.Packages, spec.Child("packages"))...)
	return errs
}

func budget(s skyhookv1.SkyhookSpec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	b, p := s.InterruptionBudget, spec.Child("interruptionBudget")
	if b.Percent != nil && b.Count != nil {
		errs = append(errs, field.Invalid(p, fmt.Sprintf("percent: %d, count: %d", *b.Percent, *b.Count), "percent and count are mutually exclusive"))
	}
	if b.Percent != nil && (*b.Percent < 0 || *b.Percent > 100) {
		errs = append(errs, field.Invalid(p.Child("percent"), *b.Percent, "must be between 0 and 100"))
	}
	if b.Count != nil && *b.Count < 0 {
		errs = append(errs, field.Invalid(p.Child("count"), *b.Count, "must be 0 or more"))
	}
	if s.DeploymentPolicy != "" && (b.Percent != nil || b.Count != nil) {
		errs = append(errs, field.Forbidden(p, "deploymentPolicy and interruptionBudget are mutually exclusive: the policy carries the budget"))
	}
	return errs
}

func policyReference(name string, p *field.Path, exists PolicyExists) field.ErrorList {
	if name == "" || exists == nil {
		return nil
	}
	ok, err := exists(name)
	if err != nil {
		return field.ErrorList{field.InternalError(p, fmt.Errorf("looking up DeploymentPolicy %q: %w", name, err))}
	}
	if !ok { // worded as NodeWright words it, for scripts that look for it
		return field.ErrorList{field.Invalid(p, name, fmt.Sprintf("deploymentPolicy %q not found", name))}
	}
	return nil
}

// selector checks that a label selector is well formed and converts.
func selector(s *metav1.LabelSelector, p *field.Path) field.ErrorList {
	return metav1validation.ValidateLabelSelector(s, metav1validation.LabelSelectorValidationOptions{}, p)
}

// packages checks every package, then the dependency graph.
func packages(pkgs skyhookv1.Packages, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, key := range slices.Sorted(maps.Keys(pkgs)) {
		errs = append(errs, pkg(key, pkgs[key], p.Child(key))...)
	}
	return append(errs, dependencies(pkgs, p)...)
}

func pkg(key string, pk skyhookv1.Package, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !PackageName.MatchString(key) {
		errs = append(errs, field.Invalid(p, key, "package names must match "+PackageName.String()))
	}
	if pk.Name != "" && pk.Name != key {
		errs = append(errs, field.Invalid(p.Child("name"), pk.Name, fmt.Sprintf("must equal the package's key %q", key)))
	}
	_, verr := Version(pk.Version, p.Child("version"))
	errs = append(errs, verr...)
	errs = append(errs, image(pk, p)...)
	if pk.AgentImageOverride != "" {
		if _, err := imageref.Parse(pk.AgentImageOverride); err != nil {
			errs = append(errs, field.Invalid(p.Child("agentImageOverride"), pk.AgentImageOverride, "not an image reference: "+err.Error()))
		}
	}
	if pk.Interrupt != nil {
		errs = append(errs, interrupt(*pk.Interrupt, p.Child("interrupt"))...)
	}
	errs = append(errs, configInterrupts(pk, p.Child("configInterrupts"))...)
	errs = append(errs, resources(pk.Resources, p.Child("resources"))...)
	errs = append(errs, env(pk.Env, p.Child("env"))...)
	if u := pk.Uninstall; u != nil && u.Apply && !u.Enabled {
		errs = append(errs, field.Invalid(p.Child("uninstall", "apply"), true, "uninstall.apply requires uninstall.enabled: true (the package must declare that it can be uninstalled)"))
	}
	errs = append(errs, notNegative(pk.GracefulShutdown, p.Child("gracefulShutdown"))...)
	errs = append(errs, notNegative(pk.StageTimeout, p.Child("stageTimeout"))...)
	return errs
}

// drainConfig checks NodeWright's drain settings: no negative duration
// (NodeWright's webhook refuses them as "drain config: ..."); and no two
// drain timeouts, whose meanings differ.
func drainConfig(s skyhookv1.SkyhookSpec, p *field.Path) field.ErrorList {
	d := s.DrainConfig
	if d == nil {
		return nil
	}
	errs := append(notNegative(d.Timeout, p.Child("timeout")), notNegative(d.GracePeriod, p.Child("gracePeriod"))...)
	if d.Timeout != nil && d.Timeout.Duration > 0 && s.Drain != nil && s.Drain.Timeout != nil {
		errs = append(errs, field.Forbidden(p.Child("timeout"),
			"spec.drain.timeout is set too: give one drain timeout (drainConfig.timeout leaves a timed-out node erroring and cordoned, drain.timeout does what drain.onTimeout says)"))
	}
	return errs
}

// notNegative refuses a negative duration.
func notNegative(d *metav1.Duration, p *field.Path) field.ErrorList {
	if d != nil && d.Duration < 0 {
		return field.ErrorList{field.Invalid(p, d.Duration.String(), "must not be negative")}
	}
	return nil
}

// Version parses a package version with Masterminds/semver, which accepts
// the shortened ("1.2") and date-like ("2024.05.10") forms packages use.
func Version(v string, p *field.Path) (*semver.Version, field.ErrorList) {
	if v == "" {
		return nil, field.ErrorList{field.Required(p, "a semantic version such as 1.2.0")}
	}
	parsed, err := semver.NewVersion(v)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(p, v, "must be a semantic version (for example 1.2.0, 1.2 or 2024.05.10)")}
	}
	return parsed, nil
}

// image checks the package image: it must parse; a digest in it must agree
// with containerSHA. A tag that disagrees with the version is not an error:
// the mutating webhook drops it with a warning (package defaults), since
// NodeWright runs the version whatever the tag says.
func image(pk skyhookv1.Package, p *field.Path) field.ErrorList {
	if pk.Image == "" {
		return field.ErrorList{field.Required(p.Child("image"), "the package's container image")}
	}
	ref, err := imageref.Parse(pk.Image)
	if err != nil {
		return field.ErrorList{field.Invalid(p.Child("image"), pk.Image, "not an image reference: "+err.Error())}
	}
	var errs field.ErrorList
	if ref.Digest != "" && pk.ContainerSHA != "" && !SameDigest(ref.Digest, pk.ContainerSHA) {
		errs = append(errs, field.Invalid(p.Child("containerSHA"), pk.ContainerSHA, fmt.Sprintf("disagrees with the digest %s in the image", ref.Digest)))
	}
	return errs
}

// NodeWright returns every problem of the view of a NodeWright: a
// Skyhook's, and the rules NodeWright v0.20 keeps for its group: a
// package's image is a bare repository, its version the tag and
// containerSHA the digest; an image with an inline tag or digest is
// refused, naming containerSHA.
func NodeWright(nw *skyhookv1.Skyhook, policyExists PolicyExists) field.ErrorList {
	errs := Skyhook(nw, policyExists)
	p := field.NewPath("spec", "packages")
	for _, key := range slices.Sorted(maps.Keys(nw.Spec.Packages)) {
		errs = append(errs, bareImage(nw.Spec.Packages[key].Image, p.Child(key, "image"))...)
	}
	return errs
}

// bareImage refuses an image that holds a tag or a digest, or their
// separator with nothing after it ("repo:", "repo@"); a colon before the
// last '/' is a registry's port.
func bareImage(image string, p *field.Path) field.ErrorList {
	if strings.ContainsAny(image, " \t\n") {
		return field.ErrorList{field.Invalid(p, image, "must not hold whitespace")}
	}
	rest := image
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		return field.ErrorList{field.Invalid(p, image, "must not hold a digest: give the repository alone, and the digest in containerSHA (sha256:<64 hex digits>)")}
	}
	if colon := strings.LastIndex(rest, ":"); colon > strings.LastIndex(rest, "/") {
		return field.ErrorList{field.Invalid(p, image, "must not hold a tag: give the repository alone; version is the tag it runs, and containerSHA pins a digest")}
	}
	return nil
}

// SameDigest reports whether two sha256 digests are the same, with or
// without the "sha256:" prefix.
func SameDigest(a, b string) bool {
	return strings.TrimPrefix(a, "sha256:") == strings.TrimPrefix(b, "sha256:")
}

// SameVersion reports whether an image tag names the version: equal as
// written, or equal as semantic versions ("v1.2.0" and "1.2").
func SameVersion(tag string, version *semver.Version) bool {
	if tag == version.Original() {
		return true
	}
	t, err := semver.NewVersion(tag)
	return err == nil && t.Equal(version)
}

var interruptTypes = map[skyhookv1.InterruptType]bool{
	skyhookv1.InterruptService: true, skyhookv1.InterruptReboot: true,
	skyhookv1.InterruptNoop: true, skyhookv1.InterruptRestartAllServices: true,
}

func interrupt(in skyhookv1.Interrupt, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !interruptTypes[in.Type] {
		errs = append(errs, field.NotSupported(p.Child("type"), in.Type, []string{"service", "reboot", "noop", "restartAllServices"}))
	}
	if in.Type == skyhookv1.InterruptService && len(in.Services) == 0 {
		errs = append(errs, field.Required(p.Child("services"), "a service interrupt needs at least one service"))
	}
	for i, s := range in.Services {
		switch {
		case strings.TrimSpace(s) == "" || strings.ContainsAny(s, " \t\n/"):
			errs = append(errs, field.Invalid(p.Child("services").Index(i), s, "must be a systemd unit name"))
		case strings.HasPrefix(s, "-"):
			// systemctl would read it as one of its options.
			errs = append(errs, field.Invalid(p.Child("services").Index(i), s, "must be a systemd unit name, which does not start with '-'"))
		}
	}
	return errs
}

// configInterrupts checks that every key names a configMap key, exactly or
// as a glob (path.Match syntax).
func configInterrupts(pk skyhookv1.Package, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, pattern := range slices.Sorted(maps.Keys(pk.ConfigInterrupts)) {
		kp := p.Key(pattern)
		if _, err := path.Match(pattern, ""); err != nil {
			errs = append(errs, field.Invalid(kp, pattern, "not a valid glob: "+err.Error()))
		} else if !matchesAnyKey(pattern, pk.ConfigMap) {
			errs = append(errs, field.Invalid(kp, pattern, "matches no key of configMap (exactly or as a glob)"))
		}
		errs = append(errs, interrupt(pk.ConfigInterrupts[pattern], kp)...)
	}
	return errs
}

func matchesAnyKey(pattern string, configMap map[string]string) bool {
	for key := range configMap {
		if ok, _ := path.Match(pattern, key); ok || pattern == key {
			return true
		}
	}
	return false
}

// resources checks all-or-none, positive values and limits not below requests.
func resources(r *skyhookv1.ResourceRequirements, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	quantities := []struct {
		name string
		q    *resource.Quantity
	}{
		{"cpuRequest", r.CPURequest}, {"cpuLimit", r.CPULimit},
		{"memoryRequest", r.MemoryRequest}, {"memoryLimit", r.MemoryLimit},
	}
	set := 0
	var errs field.ErrorList
	for _, x := range quantities {
		if x.q == nil {
			continue
		}
		set++
		if x.q.Sign() <= 0 {
			errs = append(errs, field.Invalid(p.Child(x.name), x.q.String(), "must be greater than 0"))
		}
	}
	if set != 0 && set != len(quantities) {
		errs = append(errs, field.Invalid(p, fmt.Sprintf("%d of 4 set", set), "set all four of cpuRequest, cpuLimit, memoryRequest and memoryLimit, or none"))
	}
	if len(errs) > 0 || set == 0 {
		return errs
	}
	if r.CPULimit.Cmp(*r.CPURequest) < 0 {
		errs = append(errs, field.Invalid(p.Child("cpuLimit"), r.CPULimit.String(), fmt.Sprintf("must be at least cpuRequest (%s)", r.CPURequest.String())))
	}
	if r.MemoryLimit.Cmp(*r.MemoryRequest) < 0 {
		errs = append(errs, field.Invalid(p.Child("memoryLimit"), r.MemoryLimit.String(), fmt.Sprintf("must be at least memoryRequest (%s)", r.MemoryRequest.String())))
	}
	return errs
}

func env(vars []corev1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, v := range vars {
		for _, msg := range utilvalidation.IsEnvVarName(v.Name) {
			errs = append(errs, field.Invalid(p.Index(i).Child("name"), v.Name, msg))
		}
		if v.Value != "" && v.ValueFrom != nil {
			errs = append(errs, field.Invalid(p.Index(i).Child("valueFrom"), "", "may not be set together with value"))
		}
	}
	return errs
}

// tolerations applies the rules the apiserver applies to a pod's
// tolerations, so a Skyhook is refused rather than its stage pods later.
func tolerations(ts []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		tp := p.Index(i)
		if t.Key != "" {
			for _, msg := range utilvalidation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(tp.Child("key"), t.Key, msg))
			}
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if t.Key == "" {
				errs = append(errs, field.Invalid(tp.Child("operator"), t.Operator, "an empty key needs operator Exists"))
			}
			for _, msg := range utilvalidation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(tp.Child("value"), t.Value, msg))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(tp.Child("value"), t.Value, "must be empty when operator is Exists"))
			}
		default:
			errs = append(errs, field.NotSupported(tp.Child("operator"), t.Operator, []string{"Equal", "Exists"}))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(tp.Child("tolerationSeconds"), *t.TolerationSeconds, "only allowed with effect NoExecute"))
		}
	}
	return errs
}
