package proc

import "syscall"

// childAttr puts a child in its own process group and has the kernel kill
// it when this program dies (Pdeathsig, Linux only).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
