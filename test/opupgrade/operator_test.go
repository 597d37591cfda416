package opupgrade

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/config"
)

// operatorProcess is one run of an operator binary, as one pod of the
// operator's Deployment.
type operatorProcess struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
}

// deployment is where an operator pod runs: the webhook port and the
// certificate directory, kept from one pod to the next as a Service and a
// mounted Secret would keep them.
type deployment struct {
	port    int
	certDir string
}

func newDeployment(t *testing.T) deployment {
	t.Helper()
	ports, err := proc.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	d := deployment{port: ports[0], certDir: t.TempDir()}
	// The operators register their webhooks at this port; once the test is
	// over nothing answers there, so the next test's creates would be
	// refused: remove them, as uninstalling the operator does.
	t.Cleanup(func() {
		cs := env.Clientset.AdmissionregistrationV1()
		_ = cs.MutatingWebhookConfigurations().Delete(context.Background(), config.MutatingWebhookName, metav1.DeleteOptions{})
		_ = cs.ValidatingWebhookConfigurations().Delete(context.Background(), config.ValidatingWebhookName, metav1.DeleteOptions{})
	})
	return d
}

// start runs binary as the operator user, with the flags every run has
// and extra, until the test ends (or kill); its output goes to
// <cluster dir>/logs/operator-<name>.log.
func (d deployment) start(t *testing.T, binary, name string, extra ...string) *operatorProcess {
	t.Helper()
	log, err := os.OpenFile(d.logPath(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--kubeconfig="+env.OperatorKubeconfig, "--namespace="+operatorNamespace,
		"--webhook-host=127.0.0.1", "--webhook-port="+strconv.Itoa(d.port), "--local-webhook-host=localhost",
		"--cert-dir="+d.certDir, "--metrics-bind-address=0", "--health-probe-bind-address=0",
		// No timeout may stand in for a missed step.
		"--reboot-timeout=30m", "--not-ready-timeout=30m")
	cmd.Args = append(cmd.Args, extra...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		t.Fatalf("starting operator %s: %v", name, err)
	}
	p := &operatorProcess{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); log.Close(); close(p.exited) }()
	t.Cleanup(p.kill)
	return p
}

func (d deployment) logPath(name string) string {
	return filepath.Join(env.Dir, "logs", "operator-"+name+".log")
}

// kill SIGKILLs the operator (a pod replaced without a graceful stop) and
// waits until it is gone.
func (p *operatorProcess) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// running fails the test when the operator has exited on its own.
func (p *operatorProcess) running(t *testing.T, d deployment) {
	t.Helper()
	select {
	case <-p.exited:
		t.Fatalf("operator %s exited: %v\n%s", p.name, p.cmd.ProcessState, proc.TailFile(d.logPath(p.name), 20))
	default:
	}
}
