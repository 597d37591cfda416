package upstreame2e

import "testing"

// nodewright/simple-nodewright: the v0.20 counterpart of
// skyhook/simple-skyhook, running the same body (simpleRollout) on
// NodeWright v0.20's files: three packages (spencer and foobar depend on
// dexter) on the test node, under a LimitRange; the legacy skyhook_*
// metrics, which v0.20 still publishes for a NodeWright, while dexter runs
// and then with all complete. Its stage pod and Job documents are
// NodeWright's machinery (skipped_test.go).
func TestNodeWrightSimpleNodeWright(t *testing.T) {
	simpleRollout(newScenario(t, "nodewright/simple-nodewright"))
}
