package vmnode

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/vmnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// bootRecorder is a package whose apply and post-interrupt each add the
// boot ID they ran in to a file under the machine's /etc: a second run
// shows, and so does the boot it ran in.
func bootRecorder(t *testing.T, name string) string {
	file := "/etc/skyhook-test/" + name
	return pushPackage(t, name, "1.0.0", map[string][]nodeimages.ShellStep{
		"apply":                {nodeimages.Step("record", `mkdir -p /etc/skyhook-test && cat /proc/sys/kernel/random/boot_id >> `+file+`.apply`)},
		"apply-check":          {nodeimages.Step("recorded", `test -s `+file+`.apply`)},
		"post-interrupt":       {nodeimages.Step("record", `cat /proc/sys/kernel/random/boot_id >> `+file+`.post`)},
		"post-interrupt-check": {nodeimages.Step("recorded", `test -s `+file+`.post`)},
	})
}

// shutdowns counts the times the machine's console shows systemd reaching
// its shutdown target: a reboot under way.
func shutdowns(t testing.TB, m *vmnode.Node) int {
	t.Helper()
	data, err := os.ReadFile(m.ConsoleLog)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "System Shutdown")
}

// attention is the Skyhook's entry for the node among the nodes needing
// attention, if any.
func attention(t testing.TB, name, node string) (skyhookv1.NodeAttention, bool) {
	t.Helper()
	sk := &skyhookv1.Skyhook{}
	if err := kube(t).Get(context.Background(), client.ObjectKey{Name: name}, sk); err != nil {
		t.Fatal(err)
	}
	for _, a := range sk.Status.NodesNeedingAttention {
		if a.Name == node {
			return a, true
		}
	}
	return skyhookv1.NodeAttention{}, false
}

// TestMachineThatDoesNotComeBackIsNamed: a machine goes down for the
// reboot its package asked for and stays down (powered off as systemd
// shuts it down). Its node goes NotReady; while the operator waits the
// rollout names it, in its status and in `skyhook status`, with since when
// it reboots and since when it is NotReady, and the node keeps its budget
// slot (in progress); past the reboot timeout it is erroring, saying since
// when. Powered on, it comes back with another boot ID and the package
// completes: apply ran once, in the boot before, post-interrupt once, in
// the boot after; the other machine's disk has none of it.
func TestMachineThatDoesNotComeBackIsNamed(t *testing.T) {
	needMachines(t)
	op.With(t, func(o *operator.Options) { o.RebootTimeout = 3 * time.Minute })
	const name = "noreturn"
	m, other := machines[0], machines[1]
	before, downs := bootID(t, m), shutdowns(t, m)
	create(t, onMachine(name, m, map[string]skyhookv1.Package{
		name: {PackageRef: skyhookv1.PackageRef{Name: name, Version: "1.0.0"}, Image: bootRecorder(t, name),
			Interrupt: &skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}},
	}))
	testenv.Eventually(t, m.Name+" to shut down for its reboot", 15*time.Minute, func() bool { return shutdowns(t, m) > downs })
	m.PowerOff()
	t.Logf("%s powered off as it shut down for its reboot", m.Name)

	var waiting skyhookv1.NodeAttention
	testenv.Eventually(t, "the rollout to name "+m.Name+" as NotReady", 4*time.Minute, func() bool {
		a, ok := attention(t, name, m.Name)
		waiting = a
		return ok && strings.Contains(a.Message, "NotReady since")
	})
	if waiting.Status != skyhookv1.StatusInProgress || !strings.Contains(waiting.Message, "rebooting for its interrupt since") {
		t.Errorf("while it reboots, %s needs attention as %q: %q; want in progress, rebooting since", m.Name, waiting.Status, waiting.Message)
	}
	status := testenv.CLI(t, cliPath, env, "status", name)
	if !strings.Contains(status, m.Name) || !strings.Contains(status, "NotReady since") {
		t.Errorf("skyhook status %s does not name %s NotReady since when:\n%s", name, m.Name, status)
	}
	sk := &skyhookv1.Skyhook{}
	must(t, kube(t).Get(context.Background(), client.ObjectKey{Name: name}, sk))
	if sk.Status.NodesInProgress != 1 {
		t.Errorf("%d nodes in progress while %s reboots, want it holding its slot", sk.Status.NodesInProgress, m.Name)
	}

	testenv.Eventually(t, m.Name+" to be erroring past the reboot timeout", 6*time.Minute, func() bool {
		a, ok := attention(t, name, m.Name)
		waiting = a
		return ok && a.Status == skyhookv1.StatusErroring
	})
	if !strings.Contains(waiting.Message, "not back Ready with a new boot ID") || !strings.Contains(waiting.Message, "NotReady since") {
		t.Errorf("past the reboot timeout: %q; want the reboot and since when the node is NotReady", waiting.Message)
	}

	must(t, m.PowerOn())
	waitSkyhook(t, name, skyhookv1.StatusComplete, 15*time.Minute)
	after := bootID(t, m)
	if after == before {
		t.Fatalf("the boot ID is still %s", before)
	}
	ranOnceIn(t, m, "/etc/skyhook-test/"+name+".apply", before, "apply")
	ranOnceIn(t, m, "/etc/skyhook-test/"+name+".post", after, "post-interrupt")
	if nodeOf(t, m).Spec.Unschedulable {
		t.Errorf("%s is cordoned after its package completed", m.Name)
	}
	if got := guestRun(t, other, "ls /etc/skyhook-test 2>/dev/null || true"); strings.Contains(got, name) {
		t.Errorf("the other machine %s has the package's files: %q", other.Name, got)
	}
}
