package upstreame2e

import (
	"context"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// skyhook/depends-on: cc-last depends on aa-fast and bb-slow (which sleeps
// ten times longer); upstream watches each apply and config pod appear in
// dependency order, then the Skyhook complete.
func TestSkyhookDependsOn(t *testing.T) {
	dependsOn(newScenario(t, "skyhook/depends-on"))
}

// dependsOn is the body of skyhook/depends-on and of its v0.20 twin
// nodewright/depends-on, for the scenario's kind.
func dependsOn(s *scenario) {
	// Upstream's pod asserts are NodeWright's pod shape (skipped); what
	// they watch for, the order of the stages, is checked on this
	// operator's stage pods.
	order := watchStagePodsOfKind(s.t, s.kind, "depends-on")

	s.step("setup")
	_, _ = s.cli("reset", "depends-on", "--confirm") // upstream: || true
	s.create(s.rolloutFile())
	for i := range s.inlineCount() {
		s.assertInline(i)
	}

	seen := order()
	s.t.Logf("stage pods in the order they appeared: %v", seen)
	at := func(stage string) int { return slices.Index(seen, stage) }
	for _, pkg := range []string{"aa-fast", "bb-slow", "cc-last"} {
		if at(pkg+" apply") < 0 || at(pkg+" apply") > at(pkg+" config") {
			s.t.Errorf("%s: apply and config pods %v, want apply then config", pkg, seen)
		}
	}
	if at("cc-last apply") < at("aa-fast config") || at("cc-last apply") < at("bb-slow config") {
		s.t.Errorf("cc-last started before the packages it depends on were configured: %v", seen)
	}
}

// watchStagePodsOfKind records the stage pods of the rollout of the kind by
// package and stage, in the order they first appear, until the test ends;
// the function returns them so far.
func watchStagePodsOfKind(t *testing.T, kind skyhookv1.RolloutKind, name string) func() []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := env.Clientset.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: kind.OwnerLabel() + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			for _, view := range stagepod.Views(pod) { // a pod of several packages under each
				for _, s := range stagepod.Stages(view) { // a run's pod under each of its stages
					if stage := stagepod.PackageOf(view) + " " + string(s); !slices.Contains(seen, stage) {
						seen = append(seen, stage)
					}
				}
			}
			mu.Unlock()
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// dependsOnResources are the resources of upstream's depends-on
// chainsaw-test.yaml assert steps, in order: the apply and config pods of
// aa-fast, bb-slow and cc-last (NodeWright's stage pod shape, skipped), then
// the Skyhook complete.
var dependsOnResources = []string{
	dependsOnPod("aa-fast", "1.2.3", "apply"),
	dependsOnPod("bb-slow", "1.2", "apply"),
	dependsOnPod("aa-fast", "1.2.3", "config"),
	dependsOnPod("bb-slow", "1.2", "config"),
	dependsOnPod("cc-last", "5.4.3", "apply"),
	dependsOnPod("cc-last", "5.4.3", "config"),
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: depends-on
status:
  status: complete
  nodeState:
    (values(@)):
      - aa-fast|1.2.3:
          image: ghcr.io/nvidia/skyhook/agentless
          name: aa-fast
          stage: config
          state: complete
          version: 1.2.3
        bb-slow|1.2:
          image: ghcr.io/nvidia/skyhook/agentless
          name: bb-slow
          stage: config
          state: complete
          version: "1.2"
        cc-last|5.4.3:
          image: ghcr.io/nvidia/skyhook/agentless
          name: cc-last
          stage: config
          state: complete
          version: 5.4.3
  nodeStatus:
    (values(@)):
      - complete
`,
}

func dependsOnPod(pkg, version, stage string) string {
	return `
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: depends-on
    skyhook.nvidia.com/package: ` + pkg + `-` + version + `
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package")):
      {
        "name": "` + pkg + `",
        "version": "` + version + `",
        "skyhook": "depends-on",
        "stage": "` + stage + `",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
`
}
