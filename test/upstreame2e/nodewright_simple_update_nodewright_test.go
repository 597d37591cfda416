package upstreame2e

import "testing"

// nodewright/simple-update-nodewright: skyhook/simple-update-skyhook for the
// NodeWright kind (NodeWright v0.20's files): three packages complete, then
// a merge patch adds two more (keeping the three) and those complete too.
func TestNodeWrightSimpleUpdateNodeWright(t *testing.T) {
	s := newScenario(t, "nodewright/simple-update-nodewright")

	s.step("deploy")
	_, _ = s.cli("reset", "simple-update-skyhook", "--confirm") // upstream: || true
	s.apply("nodewright.yaml")
	s.assert("assert.yaml")

	s.step("update")
	s.patch("update.yaml")
	s.assert("assert-update.yaml")
}
