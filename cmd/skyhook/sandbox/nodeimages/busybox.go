package nodeimages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
)

// The images need a shell (the copy container runs /bin/sh -c "mkdir && cp")
// and something that blocks (the pause container). Debian's busybox-static
// is one static binary that is both, and any Debian or Ubuntu machine
// (CI included) can fetch it with apt-get, where a download from the
// internet at large may be refused.

// busyboxMu keeps the goroutines of one process from fetching at once; the
// file lock does the same across processes (parallel test binaries).
var busyboxMu sync.Mutex

// Busybox returns the path of a static busybox binary for this machine:
// <cache>/busybox-static/bin/busybox, where <cache> is
// binaries.DefaultCacheDir(). The first call on a machine fetches it with
// `apt-get download busybox-static` (after `apt-get update` when the package
// lists were never fetched) and extracts it with dpkg-deb, under a file
// lock, and renames it into place, so that concurrent callers, in this
// process or others, fetch it once and never see half a file. Progress
// goes to log (nil discards it).
func Busybox(ctx context.Context, log io.Writer) (string, error) {
	if log == nil {
		log = io.Discard
	}
	cache, err := binaries.DefaultCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "busybox-static")
	path := filepath.Join(dir, "bin", "busybox")
	if fileExists(path) {
		return path, nil
	}
	busyboxMu.Lock()
	defer busyboxMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	unlock, err := binaries.Lock(dir + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if fileExists(path) { // fetched by another process while we waited
		return path, nil
	}
	fmt.Fprintf(log, "fetching busybox-static with apt-get into %s (once per machine)\n", path)
	data, err := fetchBusybox(ctx)
	if err != nil {
		return "", fmt.Errorf("a static busybox: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".busybox-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}

// fetchBusybox downloads the busybox-static package into a temporary
// directory and returns its /bin/busybox.
func fetchBusybox(ctx context.Context) ([]byte, error) {
	if _, err := exec.LookPath("apt-get"); err != nil {
		return nil, fmt.Errorf("%w: busybox-static is fetched with apt-get (Debian or Ubuntu)", ErrNoAptGet)
	}
	download, err := os.MkdirTemp("", "busybox-deb-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(download)
	get := func() ([]byte, error) {
		cmd := exec.CommandContext(ctx, "apt-get", "download", "busybox-static")
		cmd.Dir = download
		return cmd.CombinedOutput()
	}
	if _, err := get(); err != nil {
		// A machine whose package lists were never fetched: fetch them.
		if out, err := exec.CommandContext(ctx, "apt-get", "update", "-qq").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("apt-get update: %v: %s", err, out)
		}
		if out, err := get(); err != nil {
			return nil, fmt.Errorf("apt-get download busybox-static: %v: %s", err, out)
		}
	}
	debs, _ := filepath.Glob(filepath.Join(download, "busybox-static_*.deb"))
	if len(debs) != 1 {
		return nil, fmt.Errorf("apt-get download left %v", debs)
	}
	extracted := filepath.Join(download, "x")
	if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", debs[0], extracted).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("dpkg-deb -x: %v: %s", err, out)
	}
	return os.ReadFile(filepath.Join(extracted, "bin", "busybox"))
}

// ErrNoAptGet is the error (wrapped) of Busybox on a machine without
// apt-get, where it cannot fetch busybox-static; tests skip on it.
var ErrNoAptGet = errors.New("apt-get is not installed")

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
