package reconcile_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// By default a stage is one container, <package>-<stage>, in which the
// agent runs the stage and then its check: an install's apply and config
// run in a pod of two containers on a node that mounts image volumes (the
// simulated nodes' default; no copy container), and the rollout completes.
// The same code builds the pods of either kind.
func TestStageAndItsCheckRunInOneContainer(t *testing.T) {
	eachKind(t, func(t *testing.T, k kindCase) {
		created, _ := oneNodeRolloutOfKind(t, k, "compact", func(tuning *skyhookv1.Package) {
			tuning.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1s"}}
			tuning.ConfigMap = map[string]string{"tuning.conf": "a"}
		})
		k.wait(t, "compact", time.Minute, isReady)
		pods := created()
		if len(pods) != 1 {
			t.Fatalf("%d stage pods, want one for apply and config", len(pods))
		}
		want := []string{"tuning-apply:apply,apply-check", "tuning-config:config,config-check"}
		if got := containersAndModes(pods[0]); !slices.Equal(got, want) {
			t.Errorf("containers %v, want %v", got, want)
		}
	})
}

// --stage-containers=nodewright gives each check a container of its own,
// named as NodeWright names it; the rollout ends the same. A failed check
// fails its own container, and the node's record names it.
func TestNodeWrightShapeGivesEachCheckItsContainer(t *testing.T) {
	restartOperator(t, func(o *operator.Options) { o.StageShape = stagepod.NodeWright })
	created, _ := stageRunRollout(t, "fivecontainers", nil)
	waitSkyhook(t, "fivecontainers", time.Minute, isReady)
	pods := created()
	if len(pods) != 1 {
		t.Fatalf("%d stage pods, want one for apply and config", len(pods))
	}
	want := []string{"tuning-init:", "tuning-apply:apply", "tuning-applycheck:apply-check", "tuning-config:config", "tuning-configcheck:config-check"}
	if got := containersAndModes(pods[0]); !slices.Equal(got, want) {
		t.Errorf("containers %v, want %v", got, want)
	}

	stageRunRollout(t, "checkfails", []corev1.EnvVar{{Name: simnode.ExitCodeEnv, Value: "4"}, {Name: simnode.ExitContainersEnv, Value: "tuning-applycheck"}})
	waitSkyhook(t, "checkfails", time.Minute, func(s *skyhookv1.Skyhook) bool {
		for _, a := range s.Status.NodesNeedingAttention {
			if strings.Contains(a.Message, "stage apply: container tuning-applycheck exited with code 4") {
				return true
			}
		}
		return false
	})
}

// containersAndModes are the pod's init containers as name:agent-mode (no
// mode for the package copy).
func containersAndModes(pod *corev1.Pod) []string {
	var out []string
	for _, c := range pod.Spec.InitContainers {
		mode := ""
		if len(c.Args) > 0 && c.Name != stagepod.CopyContainer(stagepod.PackageOf(pod)) {
			mode = c.Args[0]
		}
		out = append(out, c.Name+":"+mode)
	}
	return out
}
