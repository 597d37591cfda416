// Package fleetbudget decides whether a node may go out of service under
// the cluster's NodeDisruptionBudgets: every rollout, Skyhook and
// NodeWright, shares them. A budget counts the nodes it selects that are
// out of service (cordoned by a rollout, or running any stage when the
// budget counts those too), caps them overall, per failure domain and in
// how many domains, and applies only inside its windows when it has any.
// It decides; the reconciler reads the cluster and writes. Nothing here
// reads or writes the cluster, so its tests run without one.
package fleetbudget

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Budget is a NodeDisruptionBudget made ready to decide with: its selector
// and schedules parsed.
type Budget struct {
	Name             string
	selector         labels.Selector
	max              intstr.IntOrString
	topologyKey      string
	perDomain        *intstr.IntOrString
	maxDomains       int
	windows          []window
	CountsEveryStage bool
}

type window struct {
	schedule cron.Schedule
	duration time.Duration
}

// cronParser reads the five standard fields and descriptors such as
// @daily: robfig/cron's parser, as Karpenter's budgets read theirs.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Compile checks the budget and makes it ready to decide with; every
// problem is named by its field path.
func Compile(b *skyhookv1.NodeDisruptionBudget) (*Budget, field.ErrorList) {
	spec, path := b.Spec, field.NewPath("spec")
	var errs field.ErrorList
	out := &Budget{Name: b.Name, max: spec.MaxUnavailable, CountsEveryStage: spec.CountNonInterruptingStages}
	sel, err := metav1.LabelSelectorAsSelector(&spec.NodeSelector)
	if err != nil {
		errs = append(errs, field.Invalid(path.Child("nodeSelector"), spec.NodeSelector, err.Error()))
	}
	out.selector = sel
	errs = append(errs, checkAmount(path.Child("maxUnavailable"), spec.MaxUnavailable)...)
	if t := spec.Topology; t != nil {
		tp := path.Child("topology")
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(tp.Child("key"), t.Key, "must be a label key: "+msg))
		}
		if t.MaxUnavailablePerDomain == nil && t.MaxDisruptedDomains == nil {
			errs = append(errs, field.Required(tp, "a topology caps something: maxUnavailablePerDomain, maxDisruptedDomains or both"))
		}
		if t.MaxUnavailablePerDomain != nil {
			errs = append(errs, checkAmount(tp.Child("maxUnavailablePerDomain"), *t.MaxUnavailablePerDomain)...)
		}
		if t.MaxDisruptedDomains != nil && *t.MaxDisruptedDomains < 1 {
			errs = append(errs, field.Invalid(tp.Child("maxDisruptedDomains"), *t.MaxDisruptedDomains, "must be at least 1"))
		}
		out.topologyKey, out.perDomain = t.Key, t.MaxUnavailablePerDomain
		if t.MaxDisruptedDomains != nil {
			out.maxDomains = int(*t.MaxDisruptedDomains)
		}
	}
	for i, w := range spec.Windows {
		wp := path.Child("windows").Index(i)
		s, err := cronParser.Parse(w.Schedule)
		if err != nil {
			errs = append(errs, field.Invalid(wp.Child("schedule"), w.Schedule, "must be a cron expression of five fields or a descriptor such as @daily: "+err.Error()))
		}
		if w.Duration.Duration <= 0 {
			errs = append(errs, field.Invalid(wp.Child("duration"), w.Duration.String(), "must be more than 0"))
		}
		out.windows = append(out.windows, window{schedule: s, duration: w.Duration.Duration})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// checkAmount checks a count (at least 0) or a percent string (0% to
// 100%).
func checkAmount(p *field.Path, v intstr.IntOrString) field.ErrorList {
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(p, v.IntVal, "must be 0 or more")}
		}
		return nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, 100, true)
	if err != nil || !strings.HasSuffix(v.StrVal, "%") || n < 0 || n > 100 {
		return field.ErrorList{field.Invalid(p, v.StrVal, "must be a count or a percent from 0% to 100%, such as 10%")}
	}
	return nil
}

// Selects reports whether the budget counts the node.
func (b *Budget) Selects(nodeLabels map[string]string) bool {
	return b.selector.Matches(labels.Set(nodeLabels))
}

// Active reports whether the budget applies at now: it has no windows, or
// a window started at most its duration ago.
func (b *Budget) Active(now time.Time) bool {
	if len(b.windows) == 0 {
		return true
	}
	for _, w := range b.windows {
		// The first start after now-duration is the one whose window holds
		// now, if it has begun.
		if start := w.schedule.Next(now.Add(-w.duration)); !start.After(now) {
			return true
		}
	}
	return false
}

// allowed is the cap an amount gives on total nodes (percents rounded up,
// as a PodDisruptionBudget's maxUnavailable).
func allowed(v intstr.IntOrString, total int) int {
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, total, true)
	if err != nil {
		return 0 // Compile refused it
	}
	return n
}

// String names the budget for messages.
func (b *Budget) String() string { return fmt.Sprintf("NodeDisruptionBudget %s", b.Name) }
