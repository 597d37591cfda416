package realnode

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// TestFailingCheckSaysItWasTheCheck: in the default container shape the
// agent runs apply and then apply-check in one container; a check that
// exits 4 fails that container with code 4, the node's record says the
// check failed, and `package logs --check` prints the check's part of the
// log (the apply's lines left out).
func TestFailingCheckSaysItWasTheCheck(t *testing.T) {
	needRealNode(t)
	const name = "failing-check"
	image := pushPackage(t, "badcheck", "1.0.0", map[string][]nodeimages.ShellStep{
		"apply":       {nodeimages.Step("install", `echo "installed fine"`)},
		"apply-check": {nodeimages.Step("verify", `echo "not in place after all"; exit 4`)},
	})
	outDir(t, name)
	create(t, onRealNode(name, map[string]skyhookv1.Package{
		"badcheck": {PackageRef: skyhookv1.PackageRef{Name: "badcheck", Version: "1.0.0"}, Image: image},
	}))
	waitPackage(t, name, "badcheck", "1.0.0", skyhookv1.StageApply, skyhookv1.StateErroring, 3*time.Minute)

	var said string
	_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		sk := &skyhookv1.Skyhook{}
		if err := kube(t).Get(ctx, client.ObjectKey{Name: name}, sk); err != nil {
			return false, nil
		}
		var messages []string
		for _, a := range sk.Status.NodesNeedingAttention {
			messages = append(messages, a.Message)
		}
		said = strings.Join(messages, "\n")
		return strings.Contains(said, "apply-check failed"), nil
	})
	if !strings.Contains(said, "container badcheck-apply exited with code 4") || !strings.Contains(said, "apply-check failed") {
		t.Errorf("nodesNeedingAttention says %q; want the apply container's exit 4 and that apply-check failed", said)
	}
	logs := cli(t, "package", "logs", "badcheck", "--skyhook", name, "--node", node.Name, "--check")
	if !strings.Contains(logs, "not in place after all") || strings.Contains(logs, "installed fine") {
		t.Errorf("package logs --check: want the check's lines alone:\n%s", logs)
	}
}
