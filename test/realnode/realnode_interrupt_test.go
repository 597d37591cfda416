package realnode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// fakeSystemctl writes a stand-in for systemctl on the host that records
// its arguments, one call a line, and returns its path and the record's.
// The agent runs it through SKYHOOK_SYSTEMCTL: this machine has no
// systemd, and a reboot must not really happen.
func fakeSystemctl(t *testing.T, skyhook string) (program, calls string) {
	t.Helper()
	dir := filepath.Join(hostDir, skyhook, "systemctl")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	program, calls = filepath.Join(dir, "systemctl"), filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$*\" >> " + calls + "\n"
	if err := os.WriteFile(program, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return program, calls
}

func interruptPackage(t *testing.T, name string) string {
	return pushPackage(t, name, "1.0.0", map[string][]nodeimages.ShellStep{
		"apply":       {nodeimages.Step("mark", `echo applied >> "$OUT/`+name+`"`)},
		"apply-check": {nodeimages.Step("marked", `test -s "$OUT/`+name+`"`)},
	})
}

// TestNoopAndServiceInterruptsRunOnce: a noop and a service interrupt run
// on the real node, the service one through the stand-in systemctl, once.
func TestNoopAndServiceInterruptsRunOnce(t *testing.T) {
	needRealNode(t)
	const name = "interrupts"
	systemctl, calls := fakeSystemctl(t, name)
	outDir(t, name)
	env := []corev1.EnvVar{{Name: "SKYHOOK_SYSTEMCTL", Value: systemctl}}
	create(t, onRealNode(name, map[string]skyhookv1.Package{
		"quiet": {PackageRef: skyhookv1.PackageRef{Name: "quiet", Version: "1.0.0"}, Image: interruptPackage(t, "quiet"),
			Env: env, Interrupt: &skyhookv1.Interrupt{Type: skyhookv1.InterruptNoop}},
		"restarts": {PackageRef: skyhookv1.PackageRef{Name: "restarts", Version: "1.0.0"}, Image: interruptPackage(t, "restarts"),
			Env: env, Interrupt: &skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: []string{"demo.service", "other.service"}}},
	}))
	waitSkyhook(t, name, skyhookv1.StatusComplete, 4*time.Minute)
	got := readHost(t, calls)
	want := "daemon-reload\nrestart demo.service\nrestart other.service\n"
	if got != want {
		t.Errorf("systemctl was called with:\n%s\nwant exactly once:\n%s", got, want)
	}
}

// TestRebootIsAskedForAndAwaited: a reboot interrupt makes the agent call
// `systemctl reboot` (the stand-in records it), and the operator then
// waits for the node to come back with a new boot ID, which a machine
// that did not reboot never has.
func TestRebootIsAskedForAndAwaited(t *testing.T) {
	needRealNode(t)
	const name = "reboots"
	systemctl, calls := fakeSystemctl(t, name)
	outDir(t, name)
	n, err := env.Clientset.CoreV1().Nodes().Get(context.Background(), node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bootID := n.Status.NodeInfo.BootID
	create(t, onRealNode(name, map[string]skyhookv1.Package{
		"kernel": {PackageRef: skyhookv1.PackageRef{Name: "kernel", Version: "1.0.0"}, Image: interruptPackage(t, "kernel"),
			Env: []corev1.EnvVar{{Name: "SKYHOOK_SYSTEMCTL", Value: systemctl}}, Interrupt: &skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}},
	}))
	testenv.Eventually(t, "the agent to ask for a reboot", 4*time.Minute, func() bool {
		data, _ := os.ReadFile(calls)
		return strings.TrimSpace(string(data)) == "reboot"
	})
	// The interrupt pod succeeded; the operator holds the package in its
	// interrupt until the node is back with another boot ID.
	time.Sleep(15 * time.Second)
	s, ok := packageState(t, name, "kernel", "1.0.0")
	if !ok || s.Stage != skyhookv1.StageInterrupt || s.State == skyhookv1.StateComplete {
		t.Errorf("after the reboot was asked for, the package is %+v; want it waiting in its interrupt for a new boot ID (still %s)", s, bootID)
	}
	n, err = env.Clientset.CoreV1().Nodes().Get(context.Background(), node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Status.NodeInfo.BootID != bootID {
		t.Fatalf("the boot ID changed from %s to %s: something rebooted", bootID, n.Status.NodeInfo.BootID)
	}
	if !n.Spec.Unschedulable {
		t.Errorf("the node is not cordoned while its reboot is awaited")
	}
	if got := readHost(t, calls); got != "reboot\n" {
		t.Errorf("systemctl was called with %q, want one reboot", got)
	}
}
