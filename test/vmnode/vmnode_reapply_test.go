package vmnode

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// TestUnplannedRebootIsReappliedWithReapplyOnReboot: with
// --reapply-on-reboot (NodeWright's REAPPLY_ON_REBOOT), a machine an
// admin reboots outside the rollout (systemctl reboot, from a timer of
// the guest's systemd) starts over: the operator sees the new boot ID,
// says so in a Reboot event, and runs the package again, in the new
// boot. The step that must not run twice does not: the agent's run-once
// flag is on the machine's disk, which the reboot keeps.
func TestUnplannedRebootIsReappliedWithReapplyOnReboot(t *testing.T) {
	needMachines(t)
	op.With(t, func(o *operator.Options) { o.ReapplyOnReboot = true })
	const name = "reapply"
	m := machines[1]
	file := "/etc/skyhook-test/" + name
	img := pushPackage(t, name, "1.0.0", map[string][]nodeimages.ShellStep{
		"apply": {
			nodeimages.Step("every-run", `mkdir -p /etc/skyhook-test && cat /proc/sys/kernel/random/boot_id >> `+file+`.every`),
			runOnce(nodeimages.Step("once", `cat /proc/sys/kernel/random/boot_id >> `+file+`.once`)),
		},
		"apply-check": {nodeimages.Step("recorded", `test -s `+file+`.every && test -s `+file+`.once`)},
	})
	create(t, onMachine(name, m, map[string]skyhookv1.Package{
		name: {PackageRef: skyhookv1.PackageRef{Name: name, Version: "1.0.0"}, Image: img},
	}))
	waitSkyhook(t, name, skyhookv1.StatusComplete, 10*time.Minute)

	before := bootID(t, m)
	rebooted := time.Now()
	// Started, not waited for: on a busy machine the reboot can come
	// before the kubelet reports the pod's end (seen in CI).
	guestStart(t, m, "systemd-run --on-active=3 systemctl reboot")
	waitRebooted(t, m, before, 15*time.Minute)
	t.Logf("%s rebooted in %s (%s)", m.Name, time.Since(rebooted).Round(time.Second), m.Accel())
	testenv.WaitEvent(t, env, testenv.Event{Type: corev1.EventTypeNormal, Regarding: name, Reason: "Reboot",
		Note: "detected reboot, resetting node [" + m.Name + "] to be reapplied"})
	waitSkyhook(t, name, skyhookv1.StatusComplete, 10*time.Minute)
	t.Logf("reapplied %s after the reboot", time.Since(rebooted).Round(time.Second))

	after := bootID(t, m)
	if every := strings.Fields(guestRun(t, m, "cat "+file+".every")); len(every) != 2 || every[0] != before || every[1] != after {
		t.Errorf("the idempotent step ran in the boots %q, want %s then, reapplied, %s", every, before, after)
	}
	ranOnceIn(t, m, file+".once", before, "the run-once step")
}
