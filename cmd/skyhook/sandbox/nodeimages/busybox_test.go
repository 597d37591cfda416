package nodeimages

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
)

// testBusybox is Busybox for the tests, skipped on a machine without
// apt-get.
func testBusybox(t *testing.T) string {
	t.Helper()
	path, err := Busybox(t.Context(), nil)
	if errors.Is(err, ErrNoAptGet) {
		t.Skipf("no static busybox for the images: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// A fresh cache is filled once by concurrent callers, which all get the
// same working binary.
func TestBusyboxFetchesIntoAnEmptyCache(t *testing.T) {
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("busybox-static is fetched with apt-get, which this machine lacks")
	}
	cache := t.TempDir()
	t.Setenv(binaries.CacheDirEnv, cache)
	var (
		wg    sync.WaitGroup
		paths [3]string
		errs  [3]error
		log   strings.Builder
		logMu sync.Mutex
	)
	for i := range paths {
		wg.Go(func() {
			paths[i], errs[i] = Busybox(context.Background(), writerFunc(func(p []byte) (int, error) {
				logMu.Lock()
				defer logMu.Unlock()
				return log.Write(p)
			}))
		})
	}
	wg.Wait()
	for i := range paths {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if want := cache + "/busybox-static/bin/busybox"; paths[i] != want {
			t.Errorf("call %d: path %s, want %s", i, paths[i], want)
		}
	}
	if n := strings.Count(log.String(), "fetching busybox-static"); n != 1 {
		t.Errorf("fetched %d times, want once; log:\n%s", n, log.String())
	}
	out, err := exec.Command(paths[0], "echo", "hello").CombinedOutput()
	if err != nil || string(out) != "hello\n" {
		t.Errorf("busybox echo hello: %q, %v", out, err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
