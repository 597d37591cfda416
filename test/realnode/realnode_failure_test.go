package realnode

import (
	"strings"
	"testing"
	"time"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
)

// TestFailingStepIsErroringWithItsLog: a step that exits 3 makes the
// package erroring on the node, and `skyhook package logs` shows what the
// step wrote and its exit code, read from the real kubelet through the
// apiserver.
func TestFailingStepIsErroringWithItsLog(t *testing.T) {
	needRealNode(t)
	const name = "failing"
	image := pushPackage(t, "fails", "1.0.0", map[string][]nodeimages.ShellStep{
		"apply":       {nodeimages.Step("break", `echo "about to fail on purpose"; exit 3`)},
		"apply-check": {nodeimages.Step("never", `true`)},
	})
	outDir(t, name)
	create(t, onRealNode(name, map[string]skyhookv1.Package{
		"fails": {PackageRef: skyhookv1.PackageRef{Name: "fails", Version: "1.0.0"}, Image: image},
	}))
	waitPackage(t, name, "fails", "1.0.0", skyhookv1.StageApply, skyhookv1.StateErroring, 3*time.Minute)

	logs := cli(t, "package", "logs", "fails", "--skyhook", name, "--node", node.Name)
	for _, want := range []string{"about to fail on purpose", "step break exited with code 3"} {
		if !strings.Contains(logs, want) {
			t.Errorf("skyhook package logs does not say %q:\n%s", want, logs)
		}
	}
}
