// Package opupgrade upgrades the operator in the middle of a rollout, as a
// Deployment's new pod replaces the old one: the previous version's
// binary (built from git history, see previousCommit) rolls a Skyhook out
// over KWOK nodes, is SIGKILLed half way, and the current tree's binary
// takes over from the records the old one left on the nodes
// (TestUpgradeMidRollout). TestOlderNodeRecordFormats starts the current
// operator on nodes whose records are in each older format this project
// has written (testdata/, captured from the real binaries of those
// versions by TestCaptureRecordFixtures).
//
// Both run the operator as a separate process of the real binary, as in a
// cluster; its log is <cluster dir>/logs/operator-<name>.log.
package opupgrade

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/test/clustertest"
)

const operatorNamespace = "skyhook-system"

var (
	env *cluster.Cluster
	// hosts reboots nodes for the interrupt pods that ask for it.
	hosts *simnode.HostSimulator
	// currentBinary is the operator of this tree.
	currentBinary string
	// previousBinary is the operator of previousCommit; previousErr says
	// why there is none (wrapping errNoHistory when the clone lacks it).
	previousBinary string
	previousErr    error
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	crds, err := config.CRDs()
	if err != nil {
		panic(err)
	}
	work, err := os.MkdirTemp("", "skyhook-opupgrade-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(work)
	currentBinary = filepath.Join(work, "manager")
	if err := buildCurrent(currentBinary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The previous version is built (or taken from the cache) here too;
	// when it cannot be had, only the test that needs it skips (this clone
	// lacks the commit) or fails (the build failed): the others run.
	var took time.Duration
	previousBinary, took, previousErr = buildAt(previousCommit)
	if previousErr == nil && took > 0 {
		fmt.Fprintf(os.Stderr, "built the operator of %s in %s (cached in %s)\n", previousCommit[:7], took.Round(100*time.Millisecond), filepath.Dir(previousBinary))
	}
	return clustertest.Main(m, cluster.Options{CRDs: crds, Nodes: fleet()}, &env, func(ctx context.Context, c *cluster.Cluster) error {
		hosts = c.SimulateHosts(ctx, time.Second)
		return operator.EnsureNamespace(ctx, c.Config, operatorNamespace)
	})
}
