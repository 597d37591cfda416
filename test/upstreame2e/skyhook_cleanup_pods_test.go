package upstreame2e

import (
	"testing"
	"time"
)

// skyhook/cleanup-pods: aa and bb (bb depends on aa) complete on both
// workers; a configMap change reruns bb's config; another makes it fail
// (EXIT_CODE 2); kind-worker's record is then deleted, and the node starts
// over (aa apply and config, bb apply, failing) while kind-worker2 stays
// erroring at bb's config.
func TestSkyhookCleanupPods(t *testing.T) {
	s := newScenario(t, "skyhook/cleanup-pods")
	s.skyhookSuiteWorkers() // the Skyhook selects every worker
	pods := watchStagePodsOf(t, "cleanup-pods")

	s.step("setup")
	_, _ = s.cli("reset", "cleanup-pods", "--confirm") // upstream: || true
	s.create("setup.yaml")
	s.assert("assert-setup-complete.yaml")
	s.sleep(2 * time.Second)
	s.update("force-config.yaml")
	s.assert("assert-config-complete.yaml")
	s.sleep(2 * time.Second)

	// What the skipped pod document looks for: bb's config pod has its
	// gracefulShutdown as grace period.
	if p, ok := pods.find(func(p stagePod) bool {
		return p.Package == "bb" && p.Stage == "config" && p.Pod.Annotations["skyhook.nvidia.com/generation"] == "2"
	}); !ok {
		t.Error("no config pod for bb after the configMap change")
	} else if g := p.Pod.Spec.TerminationGracePeriodSeconds; g == nil || *g != 46 {
		t.Errorf("%s: terminationGracePeriodSeconds %v, want 46 (gracefulShutdown)", p, g)
	}

	s.step("cleanup")
	s.update("muck_up.yaml")
	s.assertInline(0) // the Skyhook erroring
	seen := len(pods.all())
	if _, err := s.kubectl("annotate", "node/kind-worker", "skyhook.nvidia.com/nodeState_cleanup-pods-"); err != nil {
		t.Errorf("upstream's kubectl annotate failed: %v", err)
	}
	s.assertInline(1) // aa apply pod on kind-worker (NodeWright's pod shape: skipped, checked below)
	s.assertInline(2) // aa config pod on kind-worker (likewise)
	s.assertInline(3) // bb apply pod on kind-worker (likewise)
	s.assertInline(4) // the Skyhook erroring on both nodes

	// What the skipped pod documents look for: kind-worker started over.
	var after []string
	for _, p := range pods.all()[seen:] {
		if p.Node == "kind-worker" {
			after = append(after, p.Package+" "+p.Stage)
		}
	}
	t.Logf("stage pods on kind-worker after its record was deleted: %v", after)
	// A retry of bb's failing config may have been on its way as the
	// record went (the node erroring was kind-worker2's, with kind-worker
	// still between tries): the start over begins after it.
	for len(after) > 0 && after[0] == "bb config" {
		after = after[1:]
	}
	for i, want := range []string{"aa apply", "aa config", "bb apply"} {
		if i >= len(after) || after[i] != want {
			t.Errorf("kind-worker's stage pods after its record was deleted: %v, want aa apply, aa config, bb apply first", after)
			break
		}
	}
}

// cleanupPodsResources are the resources of upstream's cleanup-pods
// chainsaw-test.yaml assert steps, in order.
var cleanupPodsResources = []string{
	// #0 assert
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: cleanup-pods
status:
  status: erroring
`,
	// #1 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: cleanup-pods
    skyhook.nvidia.com/package: aa-1.2.3
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package")):
      {
        "name": "aa",
        "version": "1.2.3",
        "skyhook": "cleanup-pods",
        "stage": "apply",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
  ownerReferences:
    - apiVersion: skyhook.nvidia.com/v1alpha1
      kind: Skyhook
      name: cleanup-pods
spec:
  nodeName: kind-worker
  initContainers:
    - name: aa-init
    - name: aa-apply
      args:
        ([0]): apply
        ([1]): /root
        (length(@)): 3
    - name: aa-applycheck
      args:
        ([0]): apply-check
        ([1]): /root
        (length(@)): 3
`,
	// #2 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: cleanup-pods
    skyhook.nvidia.com/package: aa-1.2.3
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package")):
      {
        "name": "aa",
        "version": "1.2.3",
        "skyhook": "cleanup-pods",
        "stage": "config",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
  ownerReferences:
    - apiVersion: skyhook.nvidia.com/v1alpha1
      kind: Skyhook
      name: cleanup-pods
spec:
  nodeName: kind-worker
  initContainers:
    - name: aa-init
    - name: aa-config
      args:
        ([0]): config
        ([1]): /root
        (length(@)): 3
    - name: aa-configcheck
      args:
        ([0]): config-check
        ([1]): /root
        (length(@)): 3
`,
	// #3 assert
	`
kind: Pod
apiVersion: v1
metadata:
  namespace: skyhook
  labels:
    skyhook.nvidia.com/name: cleanup-pods
    skyhook.nvidia.com/package: bb-1.2
  annotations:
    ("skyhook.nvidia.com/package" && parse_json("skyhook.nvidia.com/package")):
      {
        "name": "bb",
        "version": "1.2",
        "skyhook": "cleanup-pods",
        "stage": "apply",
        "image": "ghcr.io/nvidia/skyhook/agentless"
      }
  ownerReferences:
    - apiVersion: skyhook.nvidia.com/v1alpha1
      kind: Skyhook
      name: cleanup-pods
spec:
  nodeName: kind-worker
  initContainers:
    - name: bb-init
    - name: bb-apply
      args:
        ([0]): apply
        ([1]): /root
        (length(@)): 3
    - name: bb-applycheck
      args:
        ([0]): apply-check
        ([1]): /root
        (length(@)): 3
`,
	// #4 assert
	`
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: cleanup-pods
status:
  status: erroring
  observedGeneration: 4
  nodeState:
    kind-worker:
      aa|1.2.3:
        name: aa
        state: complete
        version: '1.2.3'
        image: ghcr.io/nvidia/skyhook/agentless
        stage: config
      bb|1.2:
        name: bb
        state: erroring
        version: '1.2'
        image: ghcr.io/nvidia/skyhook/agentless
        stage: apply
    kind-worker2:
      aa|1.2.3:
        name: aa
        state: complete
        version: '1.2.3'
        image: ghcr.io/nvidia/skyhook/agentless
        stage: config
      bb|1.2:
        name: bb
        state: erroring
        version: '1.2'
        image: ghcr.io/nvidia/skyhook/agentless
        stage: config
  nodeStatus:
    (values(@)):
      - erroring
      - erroring
`,
}
