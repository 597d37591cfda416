package installed

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// operatorSelector selects the operator's pods (the chart's selector
// labels).
const operatorSelector = "app.kubernetes.io/name=skyhook-operator,control-plane=controller-manager"

// The chart installed with Helm runs the operator as two pods on the two
// real nodes, pulled from the private registry with the pull secret; its
// webhooks answer through their Service; a Skyhook rolls a real package
// over the real and the simulated nodes, each step once per node; and
// `helm uninstall` runs the pre-delete cleanup Job, which deletes the
// Skyhook through its finalizer, leaving no operator object and no node
// metadata behind.
func TestHelmInstallRollOutUninstall(t *testing.T) {
	needRealNodes(t)
	b := buildImages(t, "test-1")
	started := time.Now()
	helmInstall(t, values(b))
	t.Logf("helm install --wait: %s", time.Since(started).Round(time.Second))

	checkOperatorOnRealNodes(t)
	checkRefusesBadSkyhook(t)
	hostDir := rollOutMarker(t, "installed")
	t.Run("helm uninstall cleans up through its pre-delete Job", func(t *testing.T) {
		helmUninstall(t)
		// The Job deleted the Skyhook while the operator ran: its finalizer
		// uninstalled the package on every node and took the Skyhook's
		// metadata off them. (Without the Job, the chart's CRDs going
		// would leave the Skyhook and its CRD stuck on the finalizer.)
		checkNothingLeft(t, hostDir)
	})
}

// operatorPods are the operator's pods, whatever their state.
func operatorPods(t testing.TB) []corev1.Pod {
	t.Helper()
	list, err := env.Clientset.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: operatorSelector})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// kubectlApply applies the manifest with kubectl and returns its output.
func kubectlApply(t testing.TB, manifest string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return env.Kubectl("apply", "-f", path)
}

// pushPackage pushes a package whose apply step writes the node's name
// and whose config step a line, each under $OUT, and whose uninstall
// removes both and says so, with checks that they did; apply and config
// first sleep $SLOW seconds, if set. It returns the image by digest.
func pushPackage(t testing.TB) string {
	t.Helper()
	spec, err := nodeimages.ShellPackage(busybox, "marker", "1.0.0", map[string][]nodeimages.ShellStep{
		"apply":           {{Name: "name", Script: "set -eu\nmkdir -p \"$OUT\"\necho \"$SKYHOOK_NODE_NAME\" >> \"$OUT/applied\""}},
		"apply-check":     {{Name: "named", Script: "set -eu\ngrep -qx \"$SKYHOOK_NODE_NAME\" \"$OUT/applied\""}},
		"config":          {{Name: "line", Script: "set -eu\necho configured >> \"$OUT/configured\""}},
		"config-check":    {{Name: "lined", Script: "set -eu\ntest -s \"$OUT/configured\""}},
		"uninstall":       {{Name: "unmark", Script: "set -eu\nrm -f \"$OUT/applied\" \"$OUT/configured\"\necho \"$SKYHOOK_NODE_NAME\" > \"$OUT/uninstalled\""}},
		"uninstall-check": {{Name: "unmarked", Script: "set -eu\ntest ! -e \"$OUT/applied\""}},
	})
	if err != nil {
		t.Fatal(err)
	}
	img, err := nodeimages.Package(spec)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := reg.Push(context.Background(), "packages/marker:1.0.0", img)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// fleetSkyhook rolls the marker package over every node, all at once.
// The real nodes share this machine's root, so each keeps its agent state
// and output in a directory of its own under hostDir: the kubelet expands
// $(SKYHOOK_NODE_NAME), the stage pod's variable before the package's.
func fleetSkyhook(name, image, hostDir string) *skyhookv1.Skyhook {
	perNode := func(dir string) string { return filepath.Join(hostDir, dir, "$(SKYHOOK_NODE_NAME)") }
	return &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{fleetLabel: "all"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: ptrTo(4)},
			Packages: skyhookv1.Packages{"marker": {
				PackageRef: skyhookv1.PackageRef{Name: "marker", Version: "1.0.0"}, Image: image,
				Uninstall: &skyhookv1.Uninstall{Enabled: true},
				Env: []corev1.EnvVar{
					{Name: "SKYHOOK_ROOT_DIR", Value: perNode("state")},
					{Name: "SKYHOOK_LOG_DIR", Value: perNode("logs")},
					{Name: "OUT", Value: perNode("out")},
				},
			}},
		},
	}
}

// waitComplete waits until the Skyhook is complete at its generation.
func waitComplete(t testing.TB, name string) *skyhookv1.Skyhook {
	t.Helper()
	c := testenv.Client(t, env)
	sk := &skyhookv1.Skyhook{}
	testenv.Eventually(t, "Skyhook "+name+" complete", 5*time.Minute, func() bool {
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, sk); err != nil {
			return false
		}
		return sk.Status.Status == skyhookv1.StatusComplete && sk.Status.ObservedGeneration == sk.Generation
	})
	return sk
}

func ptrTo[T any](v T) *T { return &v }
