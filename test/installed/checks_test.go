package installed

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/skyhook-go/skyhook/test/testenv"
)

// The checks every way of installing passes, each a subtest.

// checkOperatorOnRealNodes: two Ready operator pods, one on each real node.
func checkOperatorOnRealNodes(t *testing.T) {
	t.Run("two operator pods run on the two real nodes", func(t *testing.T) {
		pods := operatorPods(t)
		var nodes []string
		for _, p := range pods {
			if !podutils.IsPodReady(&p) || !slices.Contains(realNodes, p.Spec.NodeName) {
				t.Errorf("operator pod %s on %q: phase %s, ready %v; want ready on a real node", p.Name, p.Spec.NodeName, p.Status.Phase, podutils.IsPodReady(&p))
			}
			nodes = append(nodes, p.Spec.NodeName)
		}
		slices.Sort(nodes)
		if !slices.Equal(nodes, realNodes) {
			t.Errorf("operator pods on %v, want one on each of %v", nodes, realNodes)
		}
	})
}

// checkRefusesBadSkyhook: `kubectl apply` of a bad Skyhook is refused
// through the webhook Service with every problem by its field path.
func checkRefusesBadSkyhook(t *testing.T) {
	t.Run("the webhooks refuse a bad Skyhook through their Service", func(t *testing.T) {
		out, err := kubectlApply(t, `apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: refused}
spec:
  nodeSelectors: {matchLabels: {fleet: all}}
  packages:
    tuning: {version: latest, image: ghcr.io/x/tuning, dependsOn: {ghost: 1.0.0}}
`)
		// The missing dependency is a problem only the webhook can see.
		for _, want := range []string{"spec.packages.tuning.version", "must be a semantic version", `spec.packages.tuning.dependsOn.ghost: Not found: "ghost"`} {
			if err == nil || !strings.Contains(out, want) {
				t.Errorf("kubectl apply of a bad Skyhook: %v, output lacks %q:\n%s", err, want, out)
			}
		}
	})
}

// rollOutMarker rolls the marker package over the real and the simulated
// nodes with a Skyhook of that name, checks each real node ran each step
// once, and returns the directory the steps write in (removed at the
// test's end).
func rollOutMarker(t *testing.T, name string) (hostDir string) {
	hostDir = t.TempDir()
	t.Run("a Skyhook rolls a real package over real and simulated nodes", func(t *testing.T) {
		image := pushPackage(t)
		sk := fleetSkyhook(name, image, hostDir)
		// The stage pods copy the package to this machine's root.
		t.Cleanup(func() { _ = os.RemoveAll(filepath.Join("/var/lib/skyhook", sk.Name)) })
		if err := testenv.Client(t, env).Create(context.Background(), sk); err != nil {
			t.Fatal(err)
		}
		done := waitComplete(t, sk.Name)
		if done.Status.CompleteNodes != "4/4" {
			t.Errorf("complete nodes %q, want 4/4", done.Status.CompleteNodes)
		}
		checkStepsRanOnce(t, hostDir)
	})
	return hostDir
}

// checkStepsRanOnce fails unless each real node's apply and config steps
// of the marker package wrote once under hostDir.
func checkStepsRanOnce(t *testing.T, hostDir string) {
	t.Helper()
	for _, node := range realNodes {
		applied, err := os.ReadFile(filepath.Join(hostDir, "out", node, "applied"))
		if err != nil || string(applied) != node+"\n" {
			t.Errorf("%s's apply step wrote %q (%v), want its name once", node, applied, err)
		}
		configured, err := os.ReadFile(filepath.Join(hostDir, "out", node, "configured"))
		if err != nil || string(configured) != "configured\n" {
			t.Errorf("%s's config step wrote %q (%v), want one line", node, configured, err)
		}
	}
}

// checkNothingLeft, after an uninstall: the package's uninstall ran on the
// real nodes (the Skyhook was deleted while the operator ran), and no
// operator pod, CRD, webhook configuration or node label or annotation of
// either API group is left.
func checkNothingLeft(t *testing.T, hostDir string) {
	t.Helper()
	for _, node := range realNodes {
		if _, err := os.Stat(filepath.Join(hostDir, "out", node, "uninstalled")); err != nil {
			t.Errorf("%s: the uninstall step did not run: %v", node, err)
		}
	}
	testenv.Eventually(t, "the operator's pods and CRDs gone", time.Minute, func() bool {
		crds, err := env.Kubectl("get", "crds", "-o", "name")
		return len(operatorPods(t)) == 0 && err == nil && !strings.Contains(crds, "skyhook.nvidia.com") && !strings.Contains(crds, "nodewright.nvidia.com")
	})
	webhooks, err := env.Kubectl("get", "validatingwebhookconfigurations,mutatingwebhookconfigurations", "-o", "name")
	if err != nil || strings.Contains(webhooks, "skyhook") {
		t.Errorf("webhook configurations left: %q, %v", webhooks, err)
	}
	nodes, err := env.Clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		for _, m := range []map[string]string{n.Labels, n.Annotations} {
			for k := range m {
				if strings.Contains(k, "skyhook.nvidia.com/") || strings.Contains(k, "nodewright.nvidia.com/") {
					t.Errorf("node %s keeps %s", n.Name, k)
				}
			}
		}
	}
}
