package main

import (
	"errors"
	"math"

	"github.com/KimMachineGun/automemlimit/memlimit"
	ctrl "sigs.k8s.io/controller-runtime"
)

// memoryLimitRatio is the share of the container's memory limit the Go
// runtime aims to stay under: the rest is headroom for what the runtime
// does not count (stacks freed late, the binary's own pages) before the
// kubelet would kill the operator at the limit.
const memoryLimitRatio = 0.9

// setMemoryLimit sets the Go runtime's soft memory limit (GOMEMLIMIT) to
// memoryLimitRatio of the limit the provider reports (the container's, from
// its cgroup, in the cluster). Without it the heap grows to twice the live
// set between collections (GOGC=100), which at 10,000 nodes is what the
// operator's peak RSS measured (docs/scale.md); with it the collector runs
// sooner as the heap nears the limit. GOMEMLIMIT in the environment wins,
// and AUTOMEMLIMIT=off turns this off (the library's rules). It returns the
// limit in effect, math.MaxInt64 for none. The cgroup v1/v2 reading is
// automemlimit's, not written here.
func setMemoryLimit(provider memlimit.Provider) (int64, error) {
	limit, err := memlimit.Set(memlimit.WithProvider(provider), memlimit.WithRatio(memoryLimitRatio))
	if errors.Is(err, memlimit.ErrNoLimit) {
		return math.MaxInt64, nil
	}
	return limit, err
}

// logMemoryLimit sets the limit from the container's cgroup and says what
// it is: a process outside a container (the sandbox, the benchmarks) has
// none unless GOMEMLIMIT says so.
func logMemoryLimit() {
	log := ctrl.Log.WithName("memory")
	limit, err := setMemoryLimit(memlimit.FromCgroup)
	switch {
	case err != nil:
		log.Info("no container memory limit to set GOMEMLIMIT from; the Go runtime's default applies", "reason", err.Error())
	case limit == math.MaxInt64:
		log.Info("no memory limit: the Go runtime's default applies")
	default:
		log.Info("Go memory limit set", "GOMEMLIMIT", limit, "MiB", limit>>20)
	}
}
