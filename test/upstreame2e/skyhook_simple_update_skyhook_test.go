package upstreame2e

import "testing"

// skyhook/simple-update-skyhook: three packages complete, then a merge
// patch adds two more (keeping the three) and those complete too.
func TestSkyhookSimpleUpdateSkyhook(t *testing.T) {
	s := newScenario(t, "skyhook/simple-update-skyhook")

	s.step("deploy")
	_, _ = s.cli("reset", "simple-update-skyhook", "--confirm") // upstream: || true
	s.apply("skyhook.yaml")
	s.assert("assert.yaml")

	s.step("update")
	s.patch("update.yaml")
	s.assert("assert-update.yaml")
}
