package upstreame2e

import (
	"testing"
	"time"
)

// nodewright/validate-packages: skyhook/validate-packages for the
// NodeWright kind (NodeWright v0.20's files): three packages that do not
// finish are applying; fixed by an update, the node completes. As for the
// Skyhook, the first two run here (KWOK) where upstream's kind cluster
// cannot run them, so they sleep the agentless image's default to be found
// applying.
func TestNodeWrightValidatePackages(t *testing.T) {
	s := newScenario(t, "nodewright/validate-packages")
	s.agentlessSleepsByDefault()

	s.step("invalid package")
	_, _ = s.cli("reset", "validate-packages", "--confirm") // upstream: || true
	s.apply("nodewright.yaml")
	s.sleep(5 * time.Second)
	s.assert("assert.yaml")

	s.step("fix package")
	s.update("update.yaml")
	s.assert("assert-update.yaml")
}
