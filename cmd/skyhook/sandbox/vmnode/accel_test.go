package vmnode

import "testing"

// A machine whose /dev/kvm is paravirtual (kvm-pvm) shows no vmx or svm
// flag: qemu must emulate there, or the guest hangs.
func TestVirtualizationFlagDecidesKVM(t *testing.T) {
	for _, c := range []struct {
		name, cpuinfo string
		want          bool
	}{
		{"intel", "processor\t: 0\nflags\t\t: fpu vme de pse vmx ept\n", true},
		{"amd", "processor\t: 0\nflags\t\t: fpu svm npt\n", true},
		{"paravirtual, no extension", "processor\t: 0\nflags\t\t: fpu vme de pse hypervisor\nvmx flags\t: ept\n", false},
		{"a flag that only contains the letters", "flags\t\t: vmxe svm2\n", false},
		{"no flags line", "processor\t: 0\n", false},
	} {
		if got := hasVirtualizationFlag(c.cpuinfo); got != c.want {
			t.Errorf("%s: hasVirtualizationFlag = %v, want %v", c.name, got, c.want)
		}
	}
}
