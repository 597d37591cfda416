package proc

import "syscall"

// childAttr puts a child in its own process group. macOS has no Pdeathsig:
// a child of a crashed program there outlives it (`skyhook sandbox down`
// stops it from its pid file). The CLI is released for macOS, so this
// package must build there.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
