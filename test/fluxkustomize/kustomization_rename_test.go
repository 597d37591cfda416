package fluxkustomize

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// renamedYAML is the manifest of the rename tests under the given kind: one
// package that declares uninstall support, so a delete that did not hand
// over would uninstall it from every node.
func renamedYAML(apiVersion, kind, name string) string {
	return fmt.Sprintf(`apiVersion: %s
kind: %s
metadata: {name: %s}
spec:
  nodeSelectors: {matchLabels: {pool: %s}}
  packages:
    tuning:
      version: "1.0.0"
      image: ghcr.io/x/tuning
      uninstall: {enabled: true}
      env:
      - {name: %s, value: "200ms"}
`, apiVersion, kind, name, renamePool, simnode.DurationEnv)
}

// Renaming the manifest's kind from Skyhook to NodeWright in Git: Flux's
// kustomize-controller applies the NodeWright, then prunes the Skyhook.
// The NodeWright takes the node records over, so no stage runs again;
// the pruned Skyhook uninstalls nothing and goes at once.
func TestRenamingASkyhookToANodeWrightInGitRerunsAndUninstallsNothing(t *testing.T) {
	const name = "renamed"
	f, commit := newFleet(t, "rename", map[string]string{"skyhooks/gpu.yaml": renamedYAML("skyhook.nvidia.com/v1alpha1", "Skyhook", name)})
	waitReady(t, f, commit, 2*time.Minute)
	c := testenv.Client(t, env)
	ctx := context.Background()
	testenv.Eventually(t, "the Skyhook to be complete", 2*time.Minute, func() bool {
		sk := getSkyhook(t, name)
		return conditions.IsReady(sk) && sk.Status.CompleteNodes == "2/2"
	})
	records := map[string]string{}
	for _, n := range renameNodes(t) {
		records[n.Name] = n.Annotations["skyhook.nvidia.com/nodeState_"+name]
	}

	created := stagePodsCreated(t)
	renamed := f.push(t, map[string]string{"skyhooks/gpu.yaml": renamedYAML("nodewright.nvidia.com/v1alpha1", "NodeWright", name)}, "rename to NodeWright")
	waitReady(t, f, renamed, 2*time.Minute)
	testenv.Eventually(t, "the pruned Skyhook to be gone", time.Minute, func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: name}, &skyhookv1.Skyhook{}))
	})
	nw := &nodewrightv1.NodeWright{}
	testenv.Eventually(t, "the NodeWright to be Ready", time.Minute, func() bool {
		return c.Get(ctx, client.ObjectKey{Name: name}, nw) == nil && conditions.IsReady(nw) && nw.Status.CompleteNodes == "2/2"
	})
	t.Cleanup(func() { _ = c.Delete(ctx, nw) })
	for _, n := range renameNodes(t) {
		if got := n.Annotations["nodewright.nvidia.com/nodeState_"+name]; got != records[n.Name] {
			t.Errorf("node %s: the NodeWright's record %s, want the Skyhook's %s", n.Name, got, records[n.Name])
		}
		if _, left := n.Annotations["skyhook.nvidia.com/nodeState_"+name]; left {
			t.Errorf("node %s keeps the Skyhook's record", n.Name)
		}
	}
	if pods := created(); len(pods) > 0 {
		t.Errorf("stage pods created after the rename: %v", pods)
	}
}

func renameNodes(t *testing.T) []corev1.Node {
	t.Helper()
	var nodes corev1.NodeList
	if err := testenv.Client(t, env).List(context.Background(), &nodes, client.MatchingLabels{"pool": renamePool}); err != nil {
		t.Fatal(err)
	}
	return nodes.Items
}

// stagePodsCreated records the stage pods created from now on for the
// rename pool's nodes, as "<node>/<stage>".
func stagePodsCreated(t *testing.T) func() []string {
	t.Helper()
	return testenv.PodsCreated(t, env.Clientset, "skyhook-system", func(pod *corev1.Pod) []string {
		if !strings.HasPrefix(pod.Spec.NodeName, renamePool+"-") {
			return nil
		}
		return []string{pod.Spec.NodeName + "/" + pod.Labels["skyhook.nvidia.com/stage"]}
	})
}
