// Package binaries builds the control-plane programs the local cluster runs
// (kube-apiserver, kube-controller-manager, etcd and KWOK), and Flux's
// controllers and CLI for the GitOps tests, from the Go module proxy at
// pinned versions, into a cache keyed by component and version.
//
// setup-envtest would download prebuilt binaries, which this project cannot
// rely on (only the module proxy is reachable), so each component is built
// from source through a throw-away "wrapper" module that requires the
// component's main module. Builds are serialised with a file lock, so test
// packages that start at the same time build each binary once and share it.
package binaries

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Versions pins the version of every component.
type Versions struct {
	// Kubernetes is the k8s.io/kubernetes release of kube-apiserver and
	// kube-controller-manager, for example "v1.36.3".
	Kubernetes string
	// Etcd is the go.etcd.io/etcd/server/v3 release, for example "v3.5.21".
	Etcd string
	// KWOK is the sigs.k8s.io/kwok release, for example "v0.8.0".
	KWOK string
}

// DefaultVersions are the versions the tests and the sandbox run. The
// Kubernetes minor matches the client libraries in go.mod.
var DefaultVersions = Versions{
	Kubernetes: "v1.36.3",
	Etcd:       "v3.5.21",
	KWOK:       "v0.8.0",
}

// Set is a set of built binaries, ready to run.
type Set struct {
	Versions Versions
	// KubeAPIServer, KubeControllerManager, KubeScheduler, Kubectl, Etcd
	// and KWOK are paths of executables.
	KubeAPIServer         string
	KubeControllerManager string
	KubeScheduler         string
	Kubectl               string
	Etcd                  string
	KWOK                  string
	// KWOKCRDs are the CustomResourceDefinition files of the KWOK kinds the
	// harness uses (Stage, Logs), taken from the same KWOK release.
	KWOKCRDs []string
}

// Options configure Ensure.
type Options struct {
	// Versions to build; DefaultVersions when zero.
	Versions Versions
	// CacheDir holds the built binaries; DefaultCacheDir() when empty.
	CacheDir string
	// Log receives build progress; discarded when nil.
	Log io.Writer
}

// withDefaults fills in the log and the cache directory.
func (o *Options) withDefaults() error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.CacheDir == "" {
		dir, err := DefaultCacheDir()
		if err != nil {
			return err
		}
		o.CacheDir = dir
	}
	return nil
}

// CacheDirEnv overrides the cache directory.
const CacheDirEnv = "SKYHOOK_CACHE_DIR"

// DefaultCacheDir is $SKYHOOK_CACHE_DIR, or skyhook/ under the user's cache
// directory ($XDG_CACHE_HOME or ~/.cache).
func DefaultCacheDir() (string, error) {
	if dir := os.Getenv(CacheDirEnv); dir != "" {
		return filepath.Abs(dir)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a cache directory (set %s): %w", CacheDirEnv, err)
	}
	return filepath.Join(base, "skyhook"), nil
}

// Ensure returns the binaries of the requested versions, building those that
// are not in the cache yet.
func Ensure(ctx context.Context, opts Options) (*Set, error) {
	if opts.Versions == (Versions{}) {
		opts.Versions = DefaultVersions
	}
	if err := opts.withDefaults(); err != nil {
		return nil, err
	}
	v := opts.Versions
	set := &Set{Versions: v}
	for _, r := range recipes(v) {
		dir, err := ensure(ctx, opts, r)
		if err != nil {
			return nil, fmt.Errorf("building %s %s: %w", r.name, r.version, err)
		}
		r.assign(set, dir)
	}
	return set, nil
}

// ensure returns the cache directory of one recipe, building it under the
// recipe's lock when it is missing.
func ensure(ctx context.Context, opts Options, r recipe) (string, error) {
	dir := filepath.Join(opts.CacheDir, "bin", r.name, r.version+"-"+r.fingerprint())
	if complete(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	unlock, err := Lock(dir + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if complete(dir) { // built by another process while we waited
		return dir, nil
	}
	fmt.Fprintf(opts.Log, "building %s %s from the Go module proxy into %s (once per version)\n", r.name, r.version, dir)
	staging, err := os.MkdirTemp(filepath.Dir(dir), "."+r.name+"-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(staging)
	stop := Heartbeat(opts.Log, fmt.Sprintf("%s %s", r.name, r.version), time.Minute)
	err = r.build(ctx, staging, opts.Log)
	stop()
	if err != nil {
		return "", err
	}
	if err := os.Chmod(staging, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(staging, completeMarker), nil, 0o644); err != nil {
		return "", err
	}
	_ = os.RemoveAll(dir) // a half-built leftover from an interrupted run
	if err := os.Rename(staging, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// Heartbeat says every interval that the build of what is still going, and
// for how long: a cold build of Kubernetes takes minutes with nothing else
// to show. stop ends it and waits until it has.
func Heartbeat(log io.Writer, what string, interval time.Duration) (stop func()) {
	start := time.Now()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fmt.Fprintf(log, "  still building %s (%s so far)\n", what, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// completeMarker is written last, so a directory without it is a build that
// did not finish.
const completeMarker = ".complete"

func complete(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, completeMarker))
	return err == nil
}

// Lock takes an exclusive flock on path, waiting for other holders, so
// that processes filling one cache entry (test packages starting at once)
// do it once; the returned function releases it.
func Lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// fingerprint changes whenever what the recipe builds changes, so a cache
// entry built by an older recipe of the same version is not reused.
func (r recipe) fingerprint() string {
	s := fmt.Appendf(nil, "%s %v %s %v", r.module, r.packages, r.ldflags, r.files)
	if len(r.placeholders) > 0 { // only then, so older entries keep their keys
		s = fmt.Appendf(s, " %v", r.placeholders)
	}
	if r.tags != "" { // likewise
		s = fmt.Appendf(s, " tags %s", r.tags)
	}
	sum := sha256.Sum256(s)
	return hex.EncodeToString(sum[:4])
}
