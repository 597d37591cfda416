package upstreame2e

import "testing"

// nodewright/validate-packages: the v0.20 counterpart of
// skyhook/validate-packages, running the same body (validatePackages) on
// NodeWright v0.20's files: three packages that do not finish are
// applying; fixed by an update, the node completes. As for the Skyhook, the
// first two run here (KWOK) where upstream's kind cluster cannot run them,
// so they sleep the agentless image's default to be found applying.
func TestNodeWrightValidatePackages(t *testing.T) {
	validatePackages(newScenario(t, "nodewright/validate-packages"))
}
