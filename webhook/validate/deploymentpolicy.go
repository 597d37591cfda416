package validate

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/skyhook-go/skyhook/api/timewindow"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// DeploymentPolicy returns every problem of dp.
func DeploymentPolicy(dp *skyhookv1.DeploymentPolicy) field.ErrorList {
	spec := field.NewPath("spec")
	errs := deploymentBudget(dp.Spec.Default.Budget, spec.Child("default", "budget"))
	errs = append(errs, strategy(dp.Spec.Default.Strategy, spec.Child("default", "strategy"))...)
	names := map[string]int{}
	selectors := map[string]int{}
	for i, c := range dp.Spec.Compartments {
		cp := spec.Child("compartments").Index(i)
		switch {
		case c.Name == skyhookv1.DefaultCompartmentName:
			errs = append(errs, field.Invalid(cp.Child("name"), c.Name, "is reserved for the nodes no compartment selects"))
		case len(utilvalidation.IsDNS1123Label(c.Name)) > 0:
			errs = append(errs, field.Invalid(cp.Child("name"), c.Name, "must be a DNS label (lowercase letters, digits and '-')"))
		}
		if first, dup := names[c.Name]; dup {
			errs = append(errs, field.Duplicate(cp.Child("name"), fmt.Sprintf("%s (also compartments[%d])", c.Name, first)))
		} else {
			names[c.Name] = i
		}
		errs = append(errs, compartmentSelector(c.Selector, cp.Child("selector"), i, selectors)...)
		errs = append(errs, deploymentBudget(c.Budget, cp.Child("budget"))...)
		errs = append(errs, strategy(c.Strategy, cp.Child("strategy"))...)
	}
	if w := dp.Spec.InterruptWindow; w != nil {
		if _, err := timewindow.Parse(w.Days, w.Start, w.End, w.TimeZone); err != nil {
			errs = append(errs, field.Invalid(spec.Child("interruptWindow"), *w, err.Error()))
		}
	}
	return errs
}

// compartmentSelector checks a compartment's selector: valid, not empty (it
// would take every node from the default), and not the same as an earlier
// compartment's (seen maps canonical selectors to compartment indexes).
func compartmentSelector(s metav1.LabelSelector, p *field.Path, index int, seen map[string]int) field.ErrorList {
	errs := selector(&s, p)
	if len(errs) > 0 {
		return errs
	}
	sel, err := metav1.LabelSelectorAsSelector(&s)
	if err != nil {
		return field.ErrorList{field.Invalid(p, s.String(), err.Error())}
	}
	canonical := canonicalSelector(sel)
	if sel.Empty() {
		return field.ErrorList{field.Required(p, "a compartment must select nodes; an empty selector selects every node")}
	}
	if first, dup := seen[canonical]; dup {
		return field.ErrorList{field.Duplicate(p, fmt.Sprintf("%s (the selector of compartments[%d])", canonical, first))}
	}
	seen[canonical] = index
	return nil
}

// canonicalSelector writes a selector so that selectors selecting the same
// nodes read the same: "pool=a" (matchLabels) and "pool in (a)" (an
// expression with one value) are both "pool in (a)". Requirements come
// sorted from the labels package.
func canonicalSelector(sel labels.Selector) string {
	reqs, _ := sel.Requirements()
	parts := make([]string, 0, len(reqs))
	for _, r := range reqs {
		op := r.Operator()
		switch op {
		case selection.Equals, selection.DoubleEquals:
			op = selection.In
		case selection.NotEquals:
			op = selection.NotIn
		}
		values := r.Values().UnsortedList()
		sort.Strings(values)
		parts = append(parts, fmt.Sprintf("%s %s (%s)", r.Key(), op, strings.Join(values, ",")))
	}
	return strings.Join(parts, ", ")
}

func deploymentBudget(b skyhookv1.DeploymentBudget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if (b.Percent == nil) == (b.Count == nil) {
		errs = append(errs, field.Invalid(p, budgetString(b), "set exactly one of percent and count"))
	}
	if b.Percent != nil && (*b.Percent < 1 || *b.Percent > 100) {
		errs = append(errs, field.Invalid(p.Child("percent"), *b.Percent, "must be between 1 and 100"))
	}
	if b.Count != nil && *b.Count < 1 {
		errs = append(errs, field.Invalid(p.Child("count"), *b.Count, "must be at least 1"))
	}
	return errs
}

func budgetString(b skyhookv1.DeploymentBudget) string {
	s := "{"
	if b.Percent != nil {
		s += fmt.Sprintf("percent: %d", *b.Percent)
	}
	if b.Count != nil {
		if b.Percent != nil {
			s += ", "
		}
		s += fmt.Sprintf("count: %d", *b.Count)
	}
	return s + "}"
}

func strategy(s *skyhookv1.DeploymentStrategy, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	set := 0
	if s.Fixed != nil {
		set++
		errs = append(errs, batchSettings(s.Fixed.BatchSettings, p.Child("fixed"))...)
	}
	if s.Linear != nil {
		set++
		errs = append(errs, batchSettings(s.Linear.BatchSettings, p.Child("linear"))...)
		errs = append(errs, atLeast(s.Linear.Delta, 1, p.Child("linear", "delta"))...)
	}
	if s.Exponential != nil {
		set++
		errs = append(errs, batchSettings(s.Exponential.BatchSettings, p.Child("exponential"))...)
		errs = append(errs, atLeast(s.Exponential.GrowthFactor, 2, p.Child("exponential", "growthFactor"))...)
	}
	if set != 1 {
		errs = append(errs, field.Invalid(p, fmt.Sprintf("%d variants set", set), "set exactly one of fixed, linear and exponential"))
	}
	return errs
}

func batchSettings(b skyhookv1.BatchSettings, p *field.Path) field.ErrorList {
	errs := atLeast(b.InitialBatch, 1, p.Child("initialBatch"))
	errs = append(errs, atLeast(b.FailureThreshold, 1, p.Child("failureThreshold"))...)
	errs = append(errs, percent(b.BatchThreshold, p.Child("batchThreshold"))...)
	return append(errs, percent(b.SafetyLimit, p.Child("safetyLimit"))...)
}

func atLeast(v *int32, min int32, p *field.Path) field.ErrorList {
	if v != nil && *v < min {
		return field.ErrorList{field.Invalid(p, *v, fmt.Sprintf("must be at least %d", min))}
	}
	return nil
}

func percent(v *int32, p *field.Path) field.ErrorList {
	if v != nil && (*v < 1 || *v > 100) {
		return field.ErrorList{field.Invalid(p, *v, "must be between 1 and 100")}
	}
	return nil
}
