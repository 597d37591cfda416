package upstreame2e

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/upstreame2e/chainsaw"
)

// nodewright/pause-suspends-jobs (new in NodeWright v0.18): pausing a
// NodeWright while a long apply stage runs stops that stage's pod without
// marking the package erroring; resuming runs the stage again. NodeWright
// does it by suspending the stage's Job (those documents are skipped:
// skipped_test.go); the pod documents that select the stage pod by
// NodeWright's labels (none left while paused, one again once resumed)
// are evaluated, the one that waits for its phase Running is not
// (reasonNodeWrightStagePodRunning).
func TestNodeWrightPauseSuspendsJobs(t *testing.T) {
	s := newScenario(t, "nodewright/pause-suspends-jobs")
	const name = "pause-suspends-jobs"

	s.step("start-a-long-stage")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true
	pods := recordStagePodsOf(t, skyhookv1.NodeWrights, name)
	s.create("nodewright.yaml")
	s.assertInline(0) // a running apply pod (skipped: its phase); its counterpart:
	if pod := pods.wait(s, "slowpoke", skyhookv1.StageApply); pod != nil {
		t.Logf("holds (counterpart): apply pod %s is there, phase %s", pod.Name, pod.Status.Phase)
	}

	s.step("pause-suspends-the-job-and-kills-the-pod")
	if _, err := s.kubectl("annotate", "nodewright", name, "nodewright.nvidia.com/pause=true", "--overwrite"); err != nil {
		t.Fatalf("annotate: %v", err)
	}
	s.assertInline(1)                                                                   // the Job suspended (skipped)
	s.assertDocs([]chainsaw.Document{inline(t, s.name("chainsaw-test.yaml"), 2)}, true) // no apply pod left
	s.noPackageErroring(name)

	s.step("resume-restarts-the-stage")
	if _, err := s.kubectl("annotate", "nodewright", name, "nodewright.nvidia.com/pause-", "--overwrite"); err != nil {
		t.Fatalf("annotate: %v", err)
	}
	s.assertInline(3) // the Job resumed (skipped)
	s.assertInline(4) // a fresh apply pod
}

// noPackageErroring is upstream's script that fails if the test nodes'
// record of the rollout reads erroring anywhere.
func (s *scenario) noPackageErroring(name string) {
	s.t.Helper()
	list, err := env.Clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: nodeWrightTestNodeLabel + "=" + testNodeValue})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, node := range list.Items {
		state := node.Annotations["nodewright.nvidia.com/nodeState_"+name]
		if strings.Contains(state, "erroring") {
			s.t.Errorf("upstream expectation failed: pausing recorded the package as erroring on %s: %s", node.Name, state)
			continue
		}
		s.t.Logf("holds: no package marked erroring by the pause on %s: %s", node.Name, state)
	}
}

// nodeWrightPauseSuspendsJobsResources are the resources of upstream's
// nodewright/pause-suspends-jobs chainsaw-test.yaml, in order.
var nodeWrightPauseSuspendsJobsResources = []string{
	// #0 assert
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: skyhook
  labels:
    nodewright.nvidia.com/name: pause-suspends-jobs
    nodewright.nvidia.com/package: slowpoke-1.0.0
    nodewright.nvidia.com/stage: apply
status:
  phase: Running
`,
	// #1 assert (Job)
	`
apiVersion: batch/v1
kind: Job
metadata:
  namespace: skyhook
  labels:
    nodewright.nvidia.com/name: pause-suspends-jobs
    nodewright.nvidia.com/package: slowpoke-1.0.0
    nodewright.nvidia.com/stage: apply
spec:
  suspend: true
`,
	// #2 error
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: skyhook
  labels:
    nodewright.nvidia.com/name: pause-suspends-jobs
    nodewright.nvidia.com/package: slowpoke-1.0.0
    nodewright.nvidia.com/stage: apply
`,
	// #3 assert (Job)
	`
apiVersion: batch/v1
kind: Job
metadata:
  namespace: skyhook
  labels:
    nodewright.nvidia.com/name: pause-suspends-jobs
    nodewright.nvidia.com/package: slowpoke-1.0.0
    nodewright.nvidia.com/stage: apply
spec:
  ## Cleared, not merely absent: resume writes false rather than dropping the field.
  suspend: false
`,
	// #4 assert
	`
apiVersion: v1
kind: Pod
metadata:
  namespace: skyhook
  labels:
    nodewright.nvidia.com/name: pause-suspends-jobs
    nodewright.nvidia.com/package: slowpoke-1.0.0
    nodewright.nvidia.com/stage: apply
`,
}
