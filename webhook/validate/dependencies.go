package validate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// dependencies checks each package's dependsOn entries against the packages of
// the Skyhook, then looks for cycles.
func dependencies(pkgs skyhookv1.Packages, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(pkgs)) {
		dp := p.Child(name, "dependsOn")
		for _, dep := range slices.Sorted(maps.Keys(pkgs[name].DependsOn)) {
			want := pkgs[name].DependsOn[dep]
			target, ok := pkgs[dep]
			switch {
			case !ok:
				errs = append(errs, field.NotFound(dp.Child(dep), dep))
			case want == "":
				errs = append(errs, field.Required(dp.Child(dep), fmt.Sprintf("the version of %s (%s)", dep, target.Version)))
			case want != target.Version:
				errs = append(errs, field.Invalid(dp.Child(dep), want, fmt.Sprintf("package %s has version %s in this Skyhook", dep, target.Version)))
			}
		}
	}
	if cycle := findCycle(pkgs); cycle != nil {
		errs = append(errs, field.Invalid(p.Child(cycle[0], "dependsOn"), strings.Join(cycle, " -> "), "dependsOn forms a cycle"))
	}
	return errs
}

// findCycle returns one dependency cycle as the list of package names that
// form it, first name repeated at the end, or nil. The walk is in name order
// so the same Skyhook always reports the same cycle.
func findCycle(pkgs skyhookv1.Packages) []string {
	const (
		unvisited = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(name string) []string
	visit = func(name string) []string {
		state[name] = onPath
		path = append(path, name)
		for _, dep := range slices.Sorted(maps.Keys(pkgs[name].DependsOn)) {
			if _, ok := pkgs[dep]; !ok {
				continue // reported as not found
			}
			switch state[dep] {
			case onPath:
				for i, n := range path {
					if n == dep {
						return append(append([]string{}, path[i:]...), dep)
					}
				}
			case unvisited:
				if c := visit(dep); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[name] = done
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(pkgs)) {
		if state[name] == unvisited {
			if c := visit(name); c != nil {
				return c
			}
		}
	}
	return nil
}
