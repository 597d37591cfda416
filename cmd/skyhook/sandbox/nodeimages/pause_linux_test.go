package nodeimages

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// The pause image's entrypoint, run as PID 1 of its own PID namespace as in
// a container, keeps running until SIGTERM, then exits at once with 0.
func TestPauseBlocksUntilSIGTERM(t *testing.T) {
	needRoot(t)
	img, err := Pause(testBusybox(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != Platform().Architecture || !cfg.Created.Time.Equal(epoch) {
		t.Errorf("config: os %s, architecture %s, created %v; want linux, %s, %v",
			cfg.OS, cfg.Architecture, cfg.Created, Platform().Architecture, epoch)
	}
	entrypoint := cfg.Config.Entrypoint
	if len(entrypoint) == 0 {
		t.Fatal("no entrypoint")
	}
	cmd := exec.Command(entrypoint[0], entrypoint[1:]...)
	cmd.Env = cfg.Config.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: containerRoot(t, img), Cloneflags: syscall.CLONE_NEWPID}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("%v exited at once: %v", entrypoint, err)
	case <-time.After(time.Second):
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after SIGTERM: %v, want exit status 0", err)
		}
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("still running 5s after SIGTERM (PID 1 ignores signals it has no handler for)")
	}
}
