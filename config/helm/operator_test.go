package helm_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/config/helm"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// The operator binary starts with exactly the args and env of the rendered
// Deployment (a flag renamed in the code but not in the chart fails here),
// serves its webhooks and reconciles; then the rendered pre-delete hook's
// command removes the Skyhook and a NodeWright through their finalizers and the webhook
// configurations the operator made. Outside a pod, only the addresses are
// added: the webhook on localhost and free ports.
func TestOperatorStartsFromTheRenderedDeployment(t *testing.T) {
	crds, err := config.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if err := env.InstallCRDs(envtest.CRDInstallOptions{CRDs: crds}); err != nil {
		t.Fatal(err)
	}
	rel := helm.Release{Name: "skyhook-operator", Namespace: "skyhook-start"}
	kubectl(t, "create", "namespace", rel.Namespace)
	rendered := render(t, rel, nil)
	manager := buildManager(t)

	container := deployment(t, rendered).Spec.Template.Spec.Containers[0]
	ports, err := proc.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	args := append(expand(container.Args, rel.Namespace),
		"--local-webhook-host=localhost", fmt.Sprintf("--webhook-port=%d", ports[0]), "--cert-dir="+t.TempDir(),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", ports[1]), fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports[2]))
	operator := start(t, manager, args, podEnv(container.Env, rel.Namespace))
	operator.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[2]))

	// The mutating webhook fills a package's name from its key.
	apply(t, `apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata:
  name: from-the-chart
spec:
  nodeSelectors:
    matchLabels: {nothing: selects-this}
  packages:
    tuning: {version: 1.0.0, image: ghcr.io/example/tuning}
`)
	if got := kubectl(t, "get", "skyhook", "from-the-chart", "-o", "jsonpath={.spec.packages.tuning.name}"); got != "tuning" {
		t.Fatalf("package name %q: the operator's mutating webhook did not run\n%s", got, operator.logs.String())
	}
	testenv.Eventually(t, "the operator's finalizer on the Skyhook", 30*time.Second, func() bool {
		out, _ := env.Kubectl("get", "skyhook", "from-the-chart", "-o", "jsonpath={.metadata.finalizers}")
		return strings.Contains(out, "skyhook")
	})
	// A NodeWright too, which the cleanup must also see through its
	// finalizer (its own name: one of the same name would be the Skyhook's
	// twin).
	apply(t, `apiVersion: nodewright.nvidia.com/v1alpha1
kind: NodeWright
metadata:
  name: nodewright-from-the-chart
spec:
  nodeSelectors:
    matchLabels: {nothing: selects-this}
  packages:
    tuning: {version: 1.0.0, image: ghcr.io/example/tuning}
`)
	testenv.Eventually(t, "the operator's finalizer on the NodeWright", 30*time.Second, func() bool {
		out, _ := env.Kubectl("get", "nodewright", "nodewright-from-the-chart", "-o", "jsonpath={.metadata.finalizers}")
		return strings.Contains(out, "nodewright")
	})

	out := runCleanupHook(t, rendered, manager, rel.Namespace)
	if !strings.Contains(out, "cleanup: done") || !strings.Contains(out, "deleted webhook configuration skyhook-mutating-webhooks") {
		t.Errorf("cleanup said:\n%s", out)
	}
	for _, gone := range [][]string{
		{"skyhook", "from-the-chart"},
		{"nodewright", "nodewright-from-the-chart"},
		{"mutatingwebhookconfiguration", config.MutatingWebhookName},
		{"validatingwebhookconfiguration", config.ValidatingWebhookName},
	} {
		if out, err := env.Kubectl(append([]string{"get"}, gone...)...); err == nil || !strings.Contains(out, "NotFound") {
			t.Errorf("%s is still there after the cleanup: %s", strings.Join(gone, " "), out)
		}
	}
	operator.stop(t)
}

// runCleanupHook runs the rendered pre-delete Job's command and returns
// what it printed; it must succeed.
func runCleanupHook(t *testing.T, rendered *helm.Rendered, manager, namespace string) string {
	t.Helper()
	var job *batchv1.Job
	for _, h := range rendered.Hooks {
		if strings.HasSuffix(h.Name, "-cleanup") {
			job = hookJob(t, rendered, h.Name)
		}
	}
	if job == nil {
		t.Fatal("no cleanup Job among the rendered hooks")
	}
	c := job.Spec.Template.Spec.Containers[0]
	cmd := exec.Command(manager, expand(c.Args, namespace)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
	cmd.Env = append(cmd.Env, podEnv(c.Env, namespace)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the cleanup hook failed: %v\n%s", err, out)
	}
	return string(out)
}

// buildManager builds cmd/manager for the test.
func buildManager(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "manager")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/skyhook-go/skyhook/cmd/manager")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the operator: %v\n%s", err, out)
	}
	return bin
}

// process is the operator running for a test.
type process struct {
	cmd  *exec.Cmd
	logs bytes.Buffer
	done chan struct{} // closed when it has exited; err is then its end
	err  error
}

// start runs the operator against the test cluster; it is killed at the end
// of the test.
func start(t *testing.T, bin string, args, podEnv []string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Env = append(append(os.Environ(), "KUBECONFIG="+env.Kubeconfig), podEnv...)
	p.cmd.Stdout, p.cmd.Stderr = &p.logs, &p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		// Webhook configurations pointing at a stopped operator would refuse
		// every later Skyhook request in this cluster.
		_, _ = env.Kubectl("delete", "--ignore-not-found", "mutatingwebhookconfiguration", config.MutatingWebhookName)
		_, _ = env.Kubectl("delete", "--ignore-not-found", "validatingwebhookconfiguration", config.ValidatingWebhookName)
	})
	return p
}

// waitReady waits for the operator's readiness endpoint, failing early if
// the process ends (on a flag it does not know, for one).
func (p *process) waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("the operator exited with the rendered args (%v):\n%s", p.err, p.logs.String())
		case <-deadline:
			t.Fatalf("the operator was not ready in 90 s:\n%s", p.logs.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stop ends the operator as the kubelet would, and expects a clean exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
		if p.err != nil {
			t.Errorf("the operator did not stop cleanly on SIGTERM: %v\n%s", p.err, p.logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("the operator did not stop within 30 s of SIGTERM")
	}
}

// podEnv is the container's env as the kubelet would set it, the downward
// API's namespace filled in.
func podEnv(vars []corev1.EnvVar, namespace string) []string {
	var out []string
	for _, v := range vars {
		value := v.Value
		if v.ValueFrom != nil && v.ValueFrom.FieldRef != nil && v.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			value = namespace
		}
		out = append(out, v.Name+"="+value)
	}
	return out
}

// expand replaces $(POD_NAMESPACE) in args, as the kubelet does.
func expand(args []string, namespace string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "$(POD_NAMESPACE)", namespace)
	}
	return out
}
