package vmnode

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/vmnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// pushPackage builds a shell-script package and pushes it as
// packages/<name>:<version>; it returns the image without the tag.
func pushPackage(t testing.TB, name, version string, modes map[string][]nodeimages.ShellStep) string {
	t.Helper()
	img, err := registry.PushShellPackage(context.Background(), busybox, name, version, modes)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// onMachine is a Skyhook whose packages go to the one machine named.
func onMachine(name string, m *vmnode.Node, packages map[string]skyhookv1.Package) *skyhookv1.Skyhook {
	return &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/hostname": m.Name}},
			Packages:     packages,
		},
	}
}

func kube(t testing.TB) client.Client { return testenv.Client(t, env) }

// create creates the Skyhook and deletes it when the test ends.
func create(t testing.TB, sk *skyhookv1.Skyhook) { testenv.CreateSkyhook(t, env, sk, 3*time.Minute) }

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
		time.Sleep(time.Second)
	}
	out, _ := env.Kubectl("get", "pods", "-A", "-o", "wide")
	t.Fatalf("Skyhook %s is %q after %s, want %q\n%s", name, last, timeout, status, out)
}

// packageState is the machine's record of a package version.
func packageState(t testing.TB, m *vmnode.Node, skyhook, pkg, version string) (skyhookv1.PackageStatus, bool) {
	t.Helper()
	state, err := nodestate.Read(nodeOf(t, m), skyhookv1.Skyhooks.Named(skyhook))
	if err != nil {
		t.Fatalf("reading the node state of %s: %v", skyhook, err)
	}
	s, ok := state[skyhookv1.NodeStateKey(pkg, version)]
	return s, ok
}

var (
	toolImageOnce sync.Once
	toolImage     string
)

// guestRun runs a shell script in the machine's own root, from a pod on
// it (host PID and network namespaces, the root mounted, chroot into it),
// and returns what it printed. It fails the test when the script fails.
func guestRun(t testing.TB, m *vmnode.Node, script string) string {
	t.Helper()
	ctx := context.Background()
	pods := env.Clientset.CoreV1().Pods("default")
	name := guestStart(t, m, script)
	defer func() { _ = pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}) }()
	var phase corev1.PodPhase
	testenv.Eventually(t, "the command on "+m.Name+" to end", 3*time.Minute, func() bool {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			phase = p.Status.Phase
		}
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed
	})
	logs, err := pods.GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("the logs of the command on %s: %v", m.Name, err)
	}
	if phase != corev1.PodSucceeded {
		t.Fatalf("on %s, %q failed:\n%s", m.Name, script, logs)
	}
	return string(logs)
}

// guestStart starts the script as guestRun does and returns its pod's
// name without waiting for it: for a command whose effect (a reboot) may
// come before its pod's end is reported. The pod goes when the test ends.
func guestStart(t testing.TB, m *vmnode.Node, script string) string {
	t.Helper()
	toolImageOnce.Do(func() {
		img, err := nodeimages.Program(busybox, busybox, "busybox")
		if err == nil {
			toolImage, err = registry.Push(context.Background(), "tools/busybox:test", img)
		}
		if err != nil {
			t.Fatalf("the tool image: %v", err)
		}
	})
	ctx := context.Background()
	pods := env.Clientset.CoreV1().Pods("default")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "guest-run-"},
		Spec: corev1.PodSpec{
			NodeName: m.Name, HostPID: true, HostNetwork: true, RestartPolicy: corev1.RestartPolicyNever,
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name: "run", Image: toolImage,
				Command:         []string{"/bin/busybox", "chroot", "/host", "/bin/sh", "-c", script},
				SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
				VolumeMounts:    []corev1.VolumeMount{{Name: "host", MountPath: "/host"}},
			}},
			Volumes: []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}},
		},
	}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("running on %s: %v", m.Name, err)
	}
	t.Cleanup(func() { _ = pods.Delete(ctx, created.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}) })
	return created.Name
}

// bootID is the machine's boot ID as its kubelet reports it.
func bootID(t testing.TB, m *vmnode.Node) string {
	t.Helper()
	return nodeOf(t, m).Status.NodeInfo.BootID
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ranOnceIn checks that a step that adds the boot ID it ran in to the
// machine's file ran once, in the boot given.
func ranOnceIn(t testing.TB, m *vmnode.Node, file, boot, what string) {
	t.Helper()
	if got := strings.TrimSpace(guestRun(t, m, "cat "+file)); got != boot {
		t.Errorf("on %s %s ran in the boots %q, want once, in %s", m.Name, what, got, boot)
	}
}

// waitRebooted waits for the machine's node to be back Ready with a boot ID
// other than before. When it is not, the failure says what the node and
// the machine's console show: a reboot that does not come back is what
// these tests are for, and the console is the one witness of a guest
// whose kubelet never reports.
func waitRebooted(t testing.TB, m *vmnode.Node, before string, timeout time.Duration) {
	t.Helper()
	var last *corev1.Node
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		n, err := env.Clientset.CoreV1().Nodes().Get(ctx, m.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = n
		return backSince(n, before), nil
	})
	if err == nil {
		return
	}
	var conditions []string
	boot := "unknown"
	if last != nil {
		boot = last.Status.NodeInfo.BootID
		for _, c := range last.Status.Conditions {
			conditions = append(conditions, fmt.Sprintf("%s=%s since %s (%s)", c.Type, c.Status, c.LastTransitionTime.Format(time.RFC3339), c.Message))
		}
	}
	pods, _ := env.Kubectl("get", "pods", "-A", "-o", "wide", "--field-selector", "spec.nodeName="+m.Name)
	console := proc.TailFile(m.ConsoleLog, 80)
	t.Logf("power-cycling %s so that the tests after this one find it up: %v", m.Name, powerCycle(m, boot, timeout))
	t.Fatalf("%s not back Ready with a boot ID other than %s after %s: boot ID %s, %s (qemu %s)\npods on it:\n%s\nthe end of its console %s:\n%s",
		m.Name, before, timeout, boot, strings.Join(conditions, "; "), m.Describe(), pods, m.ConsoleLog, console)
}

// powerCycle cuts the machine's power, starts it again and waits for its
// node to be Ready with a boot ID other than from: after a failed reboot,
// so that one failure does not fail every test that follows on the
// machine.
func powerCycle(m *vmnode.Node, from string, timeout time.Duration) error {
	m.PowerOff()
	if err := m.PowerOn(); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(context.Background(), 2*time.Second, timeout, false, func(ctx context.Context) (bool, error) {
		n, err := env.Clientset.CoreV1().Nodes().Get(ctx, m.Name, metav1.GetOptions{})
		return err == nil && backSince(n, from), nil
	})
}

// backSince reports whether the node is Ready in a boot other than the
// one given.
func backSince(n *corev1.Node, boot string) bool {
	id := n.Status.NodeInfo.BootID
	return id != boot && id != "" && simnode.Ready(n)
}
