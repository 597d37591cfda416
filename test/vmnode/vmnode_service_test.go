package vmnode

import (
	"strings"
	"testing"
	"time"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/vmnode"
)

// unitState is a systemd unit's main PID and the time it last became
// active, as systemctl shows them in the machine.
func unitState(t *testing.T, m *vmnode.Node, unit string) (pid, since string) {
	t.Helper()
	out := guestRun(t, m, "systemctl show -p MainPID -p ActiveEnterTimestampMonotonic "+unit)
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch k {
		case "MainPID":
			pid = v
		case "ActiveEnterTimestampMonotonic":
			since = v
		}
	}
	if pid == "" || pid == "0" || since == "" {
		t.Fatalf("systemctl show %s gave %q: the unit does not run", unit, out)
	}
	return pid, since
}

// TestServiceInterruptRestartsARealUnit: a package whose interrupt is a
// service restart makes systemd in the machine restart the unit: its main
// PID and the time it became active change, the boot ID does not, and
// the package completes with the node uncordoned.
func TestServiceInterruptRestartsARealUnit(t *testing.T) {
	needMachines(t)
	const name = "service"
	m := machines[1]
	boot := bootID(t, m)
	pid, since := unitState(t, m, "skyhook-demo.service")
	create(t, onMachine(name, m, map[string]skyhookv1.Package{
		"tuning": {PackageRef: skyhookv1.PackageRef{Name: "tuning", Version: "1.0.0"},
			Image: pushPackage(t, "tuning", "1.0.0", map[string][]nodeimages.ShellStep{
				"apply":       {nodeimages.Step("write", `mkdir -p /etc/skyhook-test && echo tuned >> /etc/skyhook-test/tuning`)},
				"apply-check": {nodeimages.Step("written", `test -s /etc/skyhook-test/tuning`)},
			}),
			Interrupt: &skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: []string{"skyhook-demo.service"}}},
	}))
	waitSkyhook(t, name, skyhookv1.StatusComplete, 10*time.Minute)
	newPID, newSince := unitState(t, m, "skyhook-demo.service")
	if newPID == pid || newSince == since {
		t.Errorf("skyhook-demo.service has main PID %s (was %s), active since %s (was %s): it was not restarted", newPID, pid, newSince, since)
	}
	if got := bootID(t, m); got != boot {
		t.Errorf("the boot ID changed from %s to %s: a service interrupt rebooted the machine", boot, got)
	}
	if got := strings.TrimSpace(guestRun(t, m, "cat /etc/skyhook-test/tuning")); got != "tuned" {
		t.Errorf("apply wrote %q on the machine, want one line", got)
	}
	if nodeOf(t, m).Spec.Unschedulable {
		t.Errorf("%s is still cordoned", m.Name)
	}
}
