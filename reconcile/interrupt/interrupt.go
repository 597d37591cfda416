// Package interrupt decides which interrupt a node needs: it merges the
// interrupts of the packages due on a node into one (a reboot covers
// everything; service restarts are unioned), and finds the interrupt a
// configMap change asks for through a package's configInterrupts.
package interrupt

import (
	"path"
	"sort"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Merge returns the one interrupt that does what all of them ask: reboot
// when any asks for it; else restartAllServices when any asks for it; else
// the union of the services to restart (sorted); else noop. It returns nil
// for no interrupts.
func Merge(interrupts []skyhookv1.Interrupt) *skyhookv1.Interrupt {
	if len(interrupts) == 0 {
		return nil
	}
	rank := map[skyhookv1.InterruptType]int{skyhookv1.InterruptNoop: 0, skyhookv1.InterruptService: 1,
		skyhookv1.InterruptRestartAllServices: 2, skyhookv1.InterruptReboot: 3}
	merged := skyhookv1.Interrupt{Type: skyhookv1.InterruptNoop}
	services := map[string]bool{}
	for _, in := range interrupts {
		if rank[in.Type] > rank[merged.Type] {
			merged.Type = in.Type
		}
		for _, s := range in.Services {
			services[s] = true
		}
	}
	if merged.Type == skyhookv1.InterruptService {
		for s := range services {
			merged.Services = append(merged.Services, s)
		}
		sort.Strings(merged.Services)
	}
	return &merged
}

// ForConfigChange returns the interrupts a package's configInterrupts ask
// for when the given configMap keys changed: for each changed key, the
// entry named exactly by it, else every glob entry (path.Match syntax)
// that matches it. Keys with no entry ask for nothing.
func ForConfigChange(pkg skyhookv1.Package, changed []string) []skyhookv1.Interrupt {
	var out []skyhookv1.Interrupt
	patterns := make([]string, 0, len(pkg.ConfigInterrupts))
	for p := range pkg.ConfigInterrupts {
		patterns = append(patterns, p)
	}
	sort.Strings(patterns)
	for _, key := range changed {
		if in, ok := pkg.ConfigInterrupts[key]; ok {
			out = append(out, in)
			continue
		}
		for _, p := range patterns {
			if ok, err := path.Match(p, key); err == nil && ok {
				out = append(out, pkg.ConfigInterrupts[p])
			}
		}
	}
	return out
}
