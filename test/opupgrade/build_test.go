package opupgrade

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// previousCommit is the operator the upgrade starts from: the commit the
// previous working session ended at (763e38e, "operator.Cleanup names each
// kind it deletes ..."), the last version of this operator that could have
// been running in a cluster before the current tree. It writes node
// records in the current format, but the current tree reads them more
// strictly (config_, batch_ and interrupt_ values it does not write itself
// are reported and rewritten, a null nodeState holds the node): an upgrade
// from it is the one that must keep every promise. Move it forward when a
// session ends on a commit worth upgrading from.
const previousCommit = "763e38e4ec5cf4a0136ad489f41d5df4dad9e994"

// versionVar is the variable a build stamps with -X (operator.Version): the
// operator writes it to each node's version_<skyhook> annotation and the
// Skyhook's skyhook.nvidia.com/version, so the test can tell which binary
// wrote a record last.
const versionVar = "github.com/skyhook-go/skyhook/cmd/manager/operator.Version"

// currentVersion is the version the current tree's build is stamped with.
const currentVersion = "current"

// oldVersion is the version a build of commit is stamped with.
func oldVersion(commit string) string { return "old-" + commit[:7] }

// buildCurrent builds the operator of this tree to out.
func buildCurrent(out string) error {
	return testenv.Build(out, "./cmd/manager", "-ldflags", "-X "+versionVar+"="+currentVersion)
}

// errNoHistory says the commit cannot be had from this clone (no git, no
// history, a shallow clone without it): the test that needs it skips.
var errNoHistory = errors.New("no history")

// buildAt returns the operator binary of a commit of this repository,
// built once into the user cache (binaries.DefaultCacheDir()/bin/
// operator-<commit>/manager) from `git archive <commit>`, with the go.mod
// and go.sum of that commit and its dependencies from the module proxy.
// An error wrapping errNoHistory means the commit is not in this clone.
func buildAt(commit string) (string, time.Duration, error) {
	cache, err := binaries.DefaultCacheDir()
	if err != nil {
		return "", 0, err
	}
	dir := filepath.Join(cache, "bin", "operator-"+commit)
	out := filepath.Join(dir, "manager")
	if _, err := os.Stat(out); err == nil {
		return out, 0, nil
	}
	start := time.Now()
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", 0, err
	}
	if err := exec.Command("git", "-C", root, "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
		shallow, _ := exec.Command("git", "-C", root, "rev-parse", "--is-shallow-repository").Output()
		why := "it is not in this clone's history"
		switch {
		case strings.TrimSpace(string(shallow)) == "true":
			why = "this clone is shallow and does not reach it (git fetch --unshallow)"
		case exec.Command("git", "-C", root, "rev-parse", "--git-dir").Run() != nil:
			why = "the source tree has no git history"
		}
		return "", 0, fmt.Errorf("%w: commit %s cannot be built: %s", errNoHistory, commit[:7], why)
	}
	src, err := os.MkdirTemp("", "skyhook-operator-"+commit[:7]+"-")
	if err != nil {
		return "", 0, err
	}
	defer os.RemoveAll(src)
	archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, commit, src)
	if output, err := archive.CombinedOutput(); err != nil {
		return "", 0, fmt.Errorf("extracting commit %s: %v\n%s", commit[:7], err, output)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	tmp := fmt.Sprintf("%s.tmp-%d", out, os.Getpid()) // two runs at once each write their own, then rename
	build := exec.Command("go", "build", "-ldflags", "-X "+versionVar+"="+oldVersion(commit), "-o", tmp, "./cmd/manager")
	build.Dir = src
	// The archive has no .git (no VCS stamp) and its own go.mod and
	// go.sum, outside any workspace; -mod=mod lets go fill what go.sum
	// lacks from the module proxy.
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off")
	if output, err := build.CombinedOutput(); err != nil {
		return "", 0, fmt.Errorf("building the operator of commit %s: %v\n%s", commit[:7], err, output)
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return "", 0, err
	}
	return out, time.Since(start), nil
}
