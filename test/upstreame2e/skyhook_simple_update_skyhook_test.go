package upstreame2e

import "testing"

// skyhook/simple-update-skyhook: three packages complete, then a merge
// patch adds two more (keeping the three) and those complete too.
func TestSkyhookSimpleUpdateSkyhook(t *testing.T) {
	simpleUpdateRollout(newScenario(t, "skyhook/simple-update-skyhook"))
}

// simpleUpdateRollout is the body of skyhook/simple-update-skyhook and of
// its v0.20 twin nodewright/simple-update-nodewright, for the scenario's
// kind.
func simpleUpdateRollout(s *scenario) {
	s.step("deploy")
	_, _ = s.cli("reset", "simple-update-skyhook", "--confirm") // upstream: || true
	s.apply(s.rolloutFile())
	s.assert("assert.yaml")

	s.step("update")
	s.patch("update.yaml")
	s.assert("assert-update.yaml")
}
