package interrupt

import (
	"slices"
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func svc(names ...string) skyhookv1.Interrupt {
	return skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: names}
}

func TestMerge(t *testing.T) {
	reboot := skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}
	all := skyhookv1.Interrupt{Type: skyhookv1.InterruptRestartAllServices}
	noop := skyhookv1.Interrupt{Type: skyhookv1.InterruptNoop}
	cases := []struct {
		name string
		in   []skyhookv1.Interrupt
		want skyhookv1.Interrupt
	}{
		{"reboot wins over services", []skyhookv1.Interrupt{svc("containerd"), reboot, svc("kubelet")}, reboot},
		{"services are unioned, sorted", []skyhookv1.Interrupt{svc("kubelet", "containerd"), svc("containerd", "chronyd")}, svc("chronyd", "containerd", "kubelet")},
		{"restartAllServices covers services", []skyhookv1.Interrupt{svc("kubelet"), all}, all},
		{"noop alone stays noop", []skyhookv1.Interrupt{noop, noop}, noop},
		{"noop with a service is the service", []skyhookv1.Interrupt{noop, svc("kubelet")}, svc("kubelet")},
	}
	for _, tc := range cases {
		got := Merge(tc.in)
		if got == nil || got.Type != tc.want.Type || !slices.Equal(got.Services, tc.want.Services) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if Merge(nil) != nil {
		t.Error("no interrupts merged into one")
	}
}

func TestForConfigChange(t *testing.T) {
	pkg := skyhookv1.Package{ConfigInterrupts: map[string]skyhookv1.Interrupt{
		"kernel.conf": {Type: skyhookv1.InterruptReboot},
		"*.service":   svc("from-glob"),
		"chrony.*":    svc("chronyd"),
	}}
	got := ForConfigChange(pkg, []string{"kernel.conf", "notes.txt"})
	if len(got) != 1 || got[0].Type != skyhookv1.InterruptReboot {
		t.Errorf("exact key: %+v, want one reboot (notes.txt asks for nothing)", got)
	}
	got = ForConfigChange(pkg, []string{"chrony.service"})
	if merged := Merge(got); merged == nil || !slices.Equal(merged.Services, []string{"chronyd", "from-glob"}) {
		t.Errorf("a key matching two globs: %+v, want both restarts", got)
	}
	if got := ForConfigChange(pkg, []string{"other"}); len(got) != 0 {
		t.Errorf("an unmatched key asked for %+v", got)
	}
}
