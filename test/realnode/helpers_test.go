package realnode

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// pushPackage builds a shell-script package and pushes it to the private
// registry as <name>:<version>; it returns the image without the tag, as
// a Skyhook names it.
func pushPackage(t testing.TB, name, version string, modes map[string][]nodeimages.ShellStep) string {
	t.Helper()
	img, err := private.PushShellPackage(context.Background(), busybox, name, version, modes)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// onRealNode is a Skyhook whose packages go to the real node only. The
// agent keeps its records and step logs under hostDir.
func onRealNode(name string, packages map[string]skyhookv1.Package) *skyhookv1.Skyhook {
	for k, p := range packages {
		p.Env = append(p.Env,
			corev1.EnvVar{Name: "SKYHOOK_ROOT_DIR", Value: filepath.Join(hostDir, name, "agent-state")},
			corev1.EnvVar{Name: "SKYHOOK_LOG_DIR", Value: filepath.Join(hostDir, name, "agent-logs")},
			corev1.EnvVar{Name: "OUT", Value: filepath.Join(hostDir, name, "out")})
		packages[k] = p
	}
	return &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{kubeletnode.Label: kubeletnode.LabelValue}},
			Packages:     packages,
		},
	}
}

// outDir is where a Skyhook's steps write ($OUT), made before it runs.
func outDir(t testing.TB, skyhook string) string {
	t.Helper()
	dir := filepath.Join(hostDir, skyhook, "out")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func kube(t testing.TB) client.Client { return testenv.Client(t, env) }

// create creates the Skyhook and, when the test ends, deletes it, waits
// until it is gone and removes the package copies the stage pods left on
// this machine.
func create(t testing.TB, sk *skyhookv1.Skyhook) {
	t.Helper()
	t.Cleanup(func() { // after the Skyhook is gone (cleanups run last first)
		_ = os.RemoveAll(filepath.Join("/var/lib/skyhook", sk.Name))
		uncordon(t)
	})
	testenv.CreateSkyhook(t, env, sk, 2*time.Minute)
}

// update changes the Skyhook's spec, retrying on conflicts.
func update(t *testing.T, name string, change func(*skyhookv1.Skyhook)) {
	t.Helper()
	c := kube(t)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sk := &skyhookv1.Skyhook{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, sk); err != nil {
			return err
		}
		change(sk)
		return c.Update(context.Background(), sk)
	})
	if err != nil {
		t.Fatalf("updating Skyhook %s: %v", name, err)
	}
}

// packageState is the real node's record of a package version.
func packageState(t *testing.T, skyhook, pkg, version string) (skyhookv1.PackageStatus, bool) {
	t.Helper()
	n, err := env.Clientset.CoreV1().Nodes().Get(context.Background(), node.Name, metav1.GetOptions{})
	if err != nil {
		return skyhookv1.PackageStatus{}, false
	}
	state, err := nodestate.Read(n, skyhookv1.Skyhooks.Named(skyhook))
	if err != nil {
		t.Fatalf("reading the node state of %s: %v", skyhook, err)
	}
	s, ok := state[skyhookv1.NodeStateKey(pkg, version)]
	return s, ok
}

// waitPackage waits until the real node records the package version in
// the stage (any when empty) and state given, and fails with the operator's view when it
// does not.
func waitPackage(t *testing.T, skyhook, pkg, version string, stage skyhookv1.Stage, state skyhookv1.State, timeout time.Duration) {
	t.Helper()
	var last skyhookv1.PackageStatus
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		s, ok := packageState(t, skyhook, pkg, version)
		if ok && (stage == "" || s.Stage == stage) && s.State == state {
			return
		}
		last = s
		time.Sleep(500 * time.Millisecond)
	}
	out, _ := env.Kubectl("get", "pods", "-n", namespace, "-o", "wide")
	t.Fatalf("%s %s@%s did not reach %s/%s within %s: last %s/%s\n%s\nthe end of the kubelet's log:\n%s",
		skyhook, pkg, version, stage, state, timeout, last.Stage, last.State, out, proc.TailFile(node.KubeletLog, 15))
}

// readHost reads a file the steps wrote on this machine.
func readHost(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("on the host: %v", err)
	}
	return string(data)
}

// cli runs this repository's skyhook CLI against the cluster.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	return testenv.CLI(t, cliPath, env, args...)
}

// uncordon makes the real node schedulable again after an interrupt that
// a test ended before the operator did.
func uncordon(t testing.TB) {
	_, err := env.Clientset.CoreV1().Nodes().Patch(context.Background(), node.Name, "application/merge-patch+json",
		[]byte(`{"spec":{"unschedulable":false}}`), metav1.PatchOptions{})
	if err != nil {
		t.Errorf("uncordoning %s: %v", node.Name, err)
	}
}

// waitSkyhook waits until the Skyhook's status is the one given.
func waitSkyhook(t testing.TB, name string, status skyhookv1.Status, timeout time.Duration) {
	t.Helper()
	c := kube(t)
	var last skyhookv1.Status
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		sk := &skyhookv1.Skyhook{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, sk); err == nil {
			if last = sk.Status.Status; last == status {
				return
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	out, _ := env.Kubectl("get", "pods", "-n", namespace, "-o", "wide")
	t.Fatalf("Skyhook %s is %q after %s, want %q\n%s\nthe end of the kubelet's log:\n%s", name, last, timeout, status, out, proc.TailFile(node.KubeletLog, 15))
}
