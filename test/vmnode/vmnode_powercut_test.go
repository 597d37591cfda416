package vmnode

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// powerCutPackage has two apply steps: the first, not idempotent (the
// agent runs it once: a run-once flag), records the boot it ran in
// (flushing only its own file, not the agent's records), the second
// sleeps, in the first boot only, marking /run (gone at the next boot)
// so the test knows when to cut the power, then records its boot.
func powerCutPackage(t *testing.T, name string) string {
	first, second := "/etc/skyhook-test/"+name+".first", "/etc/skyhook-test/"+name+".second"
	return pushPackage(t, name, "1.0.0", map[string][]nodeimages.ShellStep{
		"apply": {
			runOnce(nodeimages.Step("first", `mkdir -p /etc/skyhook-test
cat /proc/sys/kernel/random/boot_id >> `+first+`
sync `+first)),
			nodeimages.Step("second", `if [ "$(cat /proc/sys/kernel/random/boot_id)" = "$(head -n1 `+first+`)" ]; then
  touch /run/skyhook-test-`+name+`.sleeping
  sleep 3600
fi
cat /proc/sys/kernel/random/boot_id >> `+second),
		},
		"apply-check": {nodeimages.Step("both", `test -s `+first+` && test -s `+second)},
	})
}

// TestPowerCutMidStageRunsNoCompletedStepTwice: the machine loses power
// (qemu killed) while a stage runs its second step, for 20 s. Powered on
// again it boots with another boot ID, the stage is
// run again from the step that had not completed (the first step's
// run-once flag survived the cut), and the package completes with the
// node record intact and the node uncordoned.
func TestPowerCutMidStageRunsNoCompletedStepTwice(t *testing.T) {
	needMachines(t)
	const name = "powercut"
	// The second machine: the reboot test reboots the first, and a reboot
	// after a power cut has once not come back here (the kubelet never
	// reported the new boot; docs/testing.md), which that test is not about.
	m := machines[1]
	boot := bootID(t, m)
	create(t, onMachine(name, m, map[string]skyhookv1.Package{
		"slow": {PackageRef: skyhookv1.PackageRef{Name: "slow", Version: "1.0.0"}, Image: powerCutPackage(t, name)},
	}))
	testenv.Eventually(t, "the second step to be running on "+m.Name, 10*time.Minute, func() bool {
		return strings.TrimSpace(guestRun(t, m, "test -e /run/skyhook-test-"+name+".sleeping && echo sleeping || true")) == "sleeping"
	})
	cut := time.Now()
	m.PowerOff()
	// Off for a short while: the operator sees the stage pod's end only
	// once the machine is back (whether the node went NotReady meanwhile
	// depends on how long the boot takes against the 50 s grace period).
	time.Sleep(20 * time.Second)
	must(t, m.PowerOn())
	waitSkyhook(t, name, skyhookv1.StatusComplete, 15*time.Minute)
	t.Logf("the package completed %s after the power cut", time.Since(cut).Round(time.Second))

	after := bootID(t, m)
	if after == boot {
		t.Fatalf("the boot ID is still %s after the power cut", boot)
	}
	ranOnceIn(t, m, "/etc/skyhook-test/"+name+".first", boot, "the first step (before the cut)")
	ranOnceIn(t, m, "/etc/skyhook-test/"+name+".second", after, "the second step (completed after the cut)")
	if s, ok := packageState(t, m, name, "slow", "1.0.0"); !ok || s.State != skyhookv1.StateComplete {
		t.Errorf("the node records %+v, want the package complete", s)
	}
	n := nodeOf(t, m)
	if n.Spec.Unschedulable {
		t.Errorf("%s is cordoned after its package completed", m.Name)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			t.Errorf("%s is not Ready: %s", m.Name, c.Message)
		}
	}
}

// runOnce marks a step not idempotent.
func runOnce(s nodeimages.ShellStep) nodeimages.ShellStep {
	s.RunOnce = true
	return s
}
