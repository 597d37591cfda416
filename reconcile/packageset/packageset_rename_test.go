package packageset_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// renamedManifest is one package that declares uninstall support on the
// rename pool, under the given kind: a delete that did not hand over would
// uninstall it from every node.
func renamedManifest(apiVersion, kind string) string {
	return fmt.Sprintf(`apiVersion: %s
kind: %s
metadata: {name: ps-renamed}
spec:
  nodeSelectors: {matchLabels: {pool: ps-rename}}
  packages:
    tuning:
      version: "1.0.0"
      image: ghcr.io/x/tuning
      uninstall: {enabled: true}
      env: [{name: %s, value: 200ms}]
`, apiVersion, kind, simnode.DurationEnv)
}

// Renaming a set's Skyhook to a NodeWright: the PackageSet applies the
// NodeWright, then prunes the Skyhook. The NodeWright takes the node
// records over, nothing runs again and nothing is uninstalled.
func TestPackageSetRenamingASkyhookToANodeWrightRerunsAndUninstallsNothing(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	nodes := simnode.Numbered("ps-rename", 2, map[string]string{"pool": "ps-rename"})
	if err := env.CreateNodes(ctx, nodes...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			_ = env.Clientset.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{})
		}
	})
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rename"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	src := newSource(t, "rename", "rename-repo")
	src.publish("main@sha1:1111", map[string]string{"sets/gpu.yaml": renamedManifest("skyhook.nvidia.com/v1alpha1", "Skyhook")})
	ps := &skyhookv1.PackageSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rename", Namespace: "rename"},
		Spec: skyhookv1.PackageSetSpec{
			SourceRef: skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "rename-repo"},
			Path:      "sets", Interval: metav1.Duration{Duration: time.Hour}, RetryInterval: &metav1.Duration{Duration: time.Second},
			Prune: true, Wait: true, Timeout: &metav1.Duration{Duration: time.Minute},
		},
	}
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ps) })
	waitPackageSet(t, client.ObjectKeyFromObject(ps), func(p *skyhookv1.PackageSet) bool {
		return conditions.IsReady(p) && p.Status.LastAppliedRevision == "main@sha1:1111"
	})
	records := map[string]string{}
	for _, n := range renamePoolNodes(t) {
		records[n.Name] = n.Annotations["skyhook.nvidia.com/nodeState_ps-renamed"]
		if records[n.Name] == "" {
			t.Fatalf("node %s has no record of the Skyhook", n.Name)
		}
	}

	created := podsCreatedOn(t, "ps-rename-")
	src.publish("main@sha1:2222", map[string]string{"sets/gpu.yaml": renamedManifest("nodewright.nvidia.com/v1alpha1", "NodeWright")})
	waitPackageSet(t, client.ObjectKeyFromObject(ps), func(p *skyhookv1.PackageSet) bool {
		return conditions.IsReady(p) && p.Status.LastAppliedRevision == "main@sha1:2222"
	})
	eventually(t, "the pruned Skyhook to be gone", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: "ps-renamed"}, &skyhookv1.Skyhook{}))
	})
	nw := &nodewrightv1.NodeWright{}
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-renamed"}, nw); err != nil || !conditions.IsReady(nw) || nw.Status.CompleteNodes != "2/2" {
		t.Fatalf("the NodeWright: %v, %+v", err, nw.Status)
	}
	for _, n := range renamePoolNodes(t) {
		if got := n.Annotations["nodewright.nvidia.com/nodeState_ps-renamed"]; got != records[n.Name] {
			t.Errorf("node %s: the NodeWright's record %s, want the Skyhook's %s", n.Name, got, records[n.Name])
		}
	}
	if pods := created(); len(pods) > 0 {
		t.Errorf("stage pods created after the rename: %v", pods)
	}
}

func renamePoolNodes(t *testing.T) []corev1.Node {
	t.Helper()
	var nodes corev1.NodeList
	if err := k8sClient(t).List(context.Background(), &nodes, client.MatchingLabels{"pool": "ps-rename"}); err != nil {
		t.Fatal(err)
	}
	return nodes.Items
}

// podsCreatedOn records the stage pods created from now on for the nodes
// named with the prefix, as "<node>/<stage>".
func podsCreatedOn(t *testing.T, prefix string) func() []string {
	t.Helper()
	return testenv.PodsCreated(t, env.Clientset, "skyhook-system", func(pod *corev1.Pod) []string {
		if !strings.HasPrefix(pod.Spec.NodeName, prefix) {
			return nil
		}
		return []string{pod.Spec.NodeName + "/" + pod.Labels["skyhook.nvidia.com/stage"]}
	})
}
