package upstreame2e

import (
	"testing"
	"time"
)

// skyhook/validate-packages: three packages that do not finish (an image
// tag NodeWright never published, requests a kind node cannot hold, a step
// that sleeps 1000 s) are applying; fixed by an update, their pods are
// replaced by ones matching the new spec and the node completes.
func TestSkyhookValidatePackages(t *testing.T) {
	validatePackages(newScenario(t, "skyhook/validate-packages"))
}

// validatePackages is the body of skyhook/validate-packages and of its
// v0.20 twin nodewright/validate-packages, for the scenario's kind.
func validatePackages(s *scenario) {
	// On upstream's kind cluster the first two never run, and would take
	// the agentless image's default sleep (5-9 s) if they did; KWOK runs
	// them, so they sleep that default here for the first expectation to
	// find them applying.
	s.agentlessSleepsByDefault()

	s.step("invalid package")
	_, _ = s.cli("reset", "validate-packages", "--confirm") // upstream: || true
	s.apply(s.rolloutFile())
	s.sleep(5 * time.Second)
	s.assert("assert.yaml")

	s.step("fix package")
	s.update("update.yaml")
	s.assert("assert-update.yaml")
}
