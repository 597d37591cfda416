package installed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/config/release"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// The kustomize base config/default, under the overlay an admin writes to
// install from their registry, applied with `kubectl apply -k`, runs the
// operator as the chart does: two Ready pods on the real nodes, webhooks
// through their Service, a real package rolled out. docs/install.md's
// uninstall (the operator's --cleanup from this machine, then `kubectl
// delete -k`) uninstalls the package and leaves nothing behind.
func TestKustomizeInstallRollOutUninstall(t *testing.T) {
	needRealNodes(t)
	b := buildImages(t, "test-1")
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := writeOverlay(t, filepath.Join(root, "config", "default"), b, true)
	installedWithKubectl(t, dir, b, "kustomized")
}

// install.yaml of a release made for this machine's registry (`make
// release IMAGE_REGISTRY=…`), which names the operator and agent images
// there, installs and uninstalls as the kustomize base does. It is applied
// under an overlay that adds only what no release can know: the pull
// secret, the pause image the nodes can pull, and the real nodes.
func TestReleaseInstallYAMLRollOutUninstall(t *testing.T) {
	needRealNodes(t)
	b := buildImages(t, "test-1")
	dist := t.TempDir()
	// The CLI archives are not installed here: stand-ins stand for them.
	notTheCLI := func(_ context.Context, p release.Platform, version string) ([]byte, error) {
		return []byte("not the CLI " + version + " " + p.String()), nil
	}
	_, err := release.Assemble(context.Background(), dist, release.Options{
		Version: "0.0.1-test.1", Tag: b.version, Registry: reg.Host(), License: []byte("test"), Build: notTheCLI,
	})
	if err != nil {
		t.Fatal(err)
	}
	installYAML, err := os.ReadFile(filepath.Join(dist, release.InstallFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeOverlay(t, "", b, false)
	if err := os.WriteFile(filepath.Join(dir, release.InstallFile), installYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	installedWithKubectl(t, dir, b, "released")
}

// installedWithKubectl installs the overlay in dir with kubectl, checks
// the operator runs build b's image and passes the checks every install
// passes, rolling out the Skyhook named skyhook, then uninstalls as
// docs/install.md says and checks nothing is left.
func installedWithKubectl(t *testing.T, dir string, b build, skyhook string) {
	t.Helper()
	installWithKubectl(t, dir)
	checkOperatorImage(t, reg.Host()+"/skyhook-operator:"+b.version)

	checkOperatorOnRealNodes(t)
	checkRefusesBadSkyhook(t)
	hostDir := rollOutMarker(t, skyhook)
	t.Run("the cleanup and kubectl delete -k uninstall", func(t *testing.T) {
		uninstallWithKubectl(t, dir)
		checkNothingLeft(t, hostDir)
	})
}

// checkOperatorImage fails unless every operator pod runs image.
func checkOperatorImage(t *testing.T, image string) {
	t.Helper()
	for _, p := range operatorPods(t) {
		if got := p.Spec.Containers[0].Image; got != image {
			t.Errorf("operator pod %s runs %s, want %s", p.Name, got, image)
		}
	}
}

// operatorDeployment is the Deployment the chart, the bases and install.yaml name.
const operatorDeployment = "skyhook-operator-controller-manager"

// writeOverlay writes, in a new folder, the kustomization an admin puts
// over base (a directory; "" for install.yaml, copied in beside it) to
// install from this machine's registry: with rename, the operator image
// by kustomize's image transformer and the agent image as the operator's
// flag; the pause image and pull secret as its flags (appended, the last of
// a flag wins), the pull secret for its own pod, and its pods on the real
// nodes (a pod on a KWOK node never runs).
func writeOverlay(t *testing.T, base string, b build, rename bool) string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"--pause-image=" + pause, "--image-pull-secret=" + pullSecret}
	resource := release.InstallFile
	if base != "" {
		// kustomize takes a base by a relative path only.
		rel, err := filepath.Rel(dir, base)
		if err != nil {
			t.Fatal(err)
		}
		resource = rel
	}
	kustomization := map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1",
		"kind":       "Kustomization",
		"resources":  []string{resource},
	}
	if rename {
		kustomization["images"] = []map[string]string{{
			"name": "ghcr.io/skyhook-go/skyhook-operator", "newName": reg.Host() + "/skyhook-operator", "newTag": b.version,
		}}
		args = append(args, "--agent-image="+b.agent)
	}
	var ops []map[string]any
	for _, arg := range args {
		ops = append(ops, map[string]any{"op": "add", "path": "/spec/template/spec/containers/0/args/-", "value": arg})
	}
	ops = append(ops,
		map[string]any{"op": "add", "path": "/spec/template/spec/imagePullSecrets", "value": []map[string]string{{"name": pullSecret}}},
		map[string]any{"op": "add", "path": "/spec/template/spec/nodeSelector", "value": map[string]string{kubeletnode.Label: kubeletnode.LabelValue}})
	patch, err := yaml.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	kustomization["patches"] = []map[string]any{{
		"target": map[string]string{"kind": "Deployment", "name": operatorDeployment},
		"patch":  string(patch),
	}}
	data, err := yaml.Marshal(kustomization)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// installWithKubectl is `kubectl apply -k dir` and `kubectl rollout
// status`; at the test's end, if the test did not uninstall, it does.
func installWithKubectl(t *testing.T, dir string) {
	t.Helper()
	started := time.Now()
	t.Cleanup(func() {
		if _, err := env.Clientset.AppsV1().Deployments(namespace).Get(context.Background(), operatorDeployment, metav1.GetOptions{}); err == nil {
			uninstallWithKubectl(t, dir)
		}
	})
	if out, err := env.Kubectl("apply", "-k", dir); err != nil {
		t.Fatalf("kubectl apply -k: %v\n%s", err, out)
	}
	if out, err := env.Kubectl("-n", namespace, "rollout", "status", "deploy/"+operatorDeployment, "--timeout="+helmTimeout.String()); err != nil {
		t.Fatalf("kubectl rollout status: %v\n%s\n%s", err, out, describeNamespace())
	}
	waitDeploymentSettled(t)
	t.Logf("kubectl apply -k and rollout status: %s", time.Since(started).Round(time.Second))
}

// uninstallWithKubectl uninstalls as docs/install.md says for kustomize:
// the operator's --cleanup from this machine (what the chart's pre-delete
// hook runs), then `kubectl delete -k`, which deletes the namespace too.
// The namespace and pull secret are made again for the next test.
func uninstallWithKubectl(t *testing.T, dir string) {
	t.Helper()
	manager := filepath.Join(t.TempDir(), "manager")
	if err := testenv.Build(manager, "./cmd/manager"); err != nil {
		t.Fatal(err)
	}
	cleanup := exec.Command(manager, "--cleanup", "--namespace="+namespace, "--certs=self")
	cleanup.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
	out, err := cleanup.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "cleanup: done") {
		t.Errorf("manager --cleanup: %v\n%s", err, out)
	}
	if out, err := env.Kubectl("delete", "-k", dir, "--ignore-not-found"); err != nil {
		t.Errorf("kubectl delete -k: %v\n%s", err, out)
	}
	ctx := context.Background()
	testenv.Eventually(t, "the namespace deleted", 2*time.Minute, func() bool {
		_, err := env.Clientset.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if err := makeNamespace(ctx, env); err != nil {
		t.Fatal(fmt.Errorf("making the namespace again: %w", err))
	}
}
