package upstreame2e

import "testing"

// nodewright/simple-update-nodewright: the v0.20 counterpart of
// skyhook/simple-update-skyhook, running the same body
// (simpleUpdateRollout) on NodeWright v0.20's files: three packages
// complete, then a merge patch adds two more (keeping the three) and those
// complete too.
func TestNodeWrightSimpleUpdateNodeWright(t *testing.T) {
	simpleUpdateRollout(newScenario(t, "nodewright/simple-update-nodewright"))
}
