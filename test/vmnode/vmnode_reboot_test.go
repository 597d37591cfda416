package vmnode

import (
	"strings"
	"testing"
	"time"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
)

// rebootPackage writes under the machine's /etc on apply (each run adds
// the boot ID it ran in, so a second run shows), asks for a kernel
// module that only a boot loads (modules-load.d), and on post-interrupt
// records the boot ID it ran in and whether the module is loaded.
func rebootPackage(t *testing.T, name string) string {
	return pushPackage(t, name, "1.0.0", map[string][]nodeimages.ShellStep{
		"apply": {nodeimages.Step("write", `mkdir -p /etc/skyhook-test
cat /proc/sys/kernel/random/boot_id >> /etc/skyhook-test/`+name+`.apply
echo dummy > /etc/modules-load.d/skyhook-test-`+name+`.conf
test ! -d /sys/module/dummy || { echo "dummy is loaded before the reboot"; exit 9; }`)},
		"apply-check":          {nodeimages.Step("written", `test -s /etc/skyhook-test/`+name+`.apply`)},
		"post-interrupt":       {nodeimages.Step("after-boot", `{ cat /proc/sys/kernel/random/boot_id; test -d /sys/module/dummy && echo dummy-loaded; } >> /etc/skyhook-test/`+name+`.post`)},
		"post-interrupt-check": {nodeimages.Step("recorded", `test -s /etc/skyhook-test/`+name+`.post`)},
	})
}

// TestRebootIsARealReboot: a package whose interrupt is reboot restarts
// the machine's kernel. The node comes back with another boot ID, the
// operator runs post-interrupt in the new boot and uncordons the node;
// apply ran once (in the old boot), post-interrupt once (in the new),
// the module asked for through modules-load.d is loaded by the boot, and
// the other machine's disk has none of it.
func TestRebootIsARealReboot(t *testing.T) {
	needMachines(t)
	const name = "kernel"
	m, other := machines[0], machines[1]
	before := bootID(t, m)
	start := time.Now()
	create(t, onMachine(name, m, map[string]skyhookv1.Package{
		"kernel": {PackageRef: skyhookv1.PackageRef{Name: "kernel", Version: "1.0.0"}, Image: rebootPackage(t, "kernel"),
			Interrupt: &skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}},
	}))
	waitSkyhook(t, name, skyhookv1.StatusComplete, 15*time.Minute)
	t.Logf("the package with a reboot took %s on %s (%s)", time.Since(start).Round(time.Second), m.Name, m.Accel())

	after := bootID(t, m)
	if after == before || after == "" {
		t.Fatalf("the boot ID of %s is %q before and %q after: the machine did not reboot", m.Name, before, after)
	}
	applied := guestRun(t, m, "cat /etc/skyhook-test/kernel.apply")
	if strings.TrimSpace(applied) != before {
		t.Errorf("apply ran in the boots %q, want once in the boot before the reboot (%s)", applied, before)
	}
	post := strings.Fields(guestRun(t, m, "cat /etc/skyhook-test/kernel.post"))
	if len(post) != 2 || post[0] != after || post[1] != "dummy-loaded" {
		t.Errorf("post-interrupt recorded %q, want once, in the new boot %s, with the module loaded", post, after)
	}
	if nodeOf(t, m).Spec.Unschedulable {
		t.Errorf("%s is still cordoned after its package completed", m.Name)
	}
	if s, ok := packageState(t, m, name, "kernel", "1.0.0"); !ok || s.State != skyhookv1.StateComplete {
		t.Errorf("the node records %+v, want the package complete", s)
	}
	if got := guestRun(t, other, "ls /etc/skyhook-test 2>/dev/null; ls /etc/modules-load.d"); strings.Contains(got, "kernel") {
		t.Errorf("the other machine %s has the package's files: %q", other.Name, got)
	}
	if bootID(t, other) == "" {
		t.Errorf("the other machine reports no boot ID")
	}
}
