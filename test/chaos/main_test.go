// Package chaos rolls a Skyhook out over KWOK nodes while faults are
// injected at random points, from a printed seed, and fails on any broken
// promise of the rollout (see invariants_test.go).
//
// The operator runs as two processes of the real binary with leader
// election, behind a webhook proxy the test controls; the Skyhook and its
// DeploymentPolicy (two compartments) come from Git through Flux's
// source-controller and a PackageSet; nodes reboot for their interrupts
// (the host simulator). Faults: SIGKILL of a replica, of the leader,
// kube-apiserver and etcd restarts, the webhook unreachable, a node
// NotReady and back, stage pods deleted by hand; all the while the
// apiserver ends watch streams every 20–40 s and another writer patches
// node annotations.
//
// `go test ./test/chaos` runs a short form (CI); `make test-chaos` the
// full one (SKYHOOK_CHAOS=full: 20 kills, every other fault at least 3
// times). SKYHOOK_CHAOS_SEED replays a run.
package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/gitserver"
	"github.com/skyhook-go/skyhook/test/clustertest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

const operatorNamespace = "skyhook-system"

var (
	env *cluster.Cluster
	git *gitserver.Server
	// managerBinary is the operator, built for the test.
	managerBinary string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	sc, err := binaries.EnsureSourceController(ctx, binaries.Options{Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	crds, err := testenv.CRDsWithControllers(sc)
	if err != nil {
		panic(err)
	}
	work, err := os.MkdirTemp("", "skyhook-chaos-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(work)
	managerBinary = filepath.Join(work, "manager")
	if err := testenv.Build(managerBinary, "./cmd/manager"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return clustertest.Main(m, cluster.Options{
		CRDs:  crds,
		Nodes: fleet(),
		// Watches end every 20 to 40 seconds, as behind a load balancer
		// with short timeouts: every client must resume them.
		APIServerArgs: []string{"--min-request-timeout=20"},
	}, &env, func(ctx context.Context, c *cluster.Cluster) error {
		if err := c.StartSourceController(ctx, sc); err != nil {
			return err
		}
		if err := operator.EnsureNamespace(ctx, c.Config, operatorNamespace); err != nil {
			return err
		}
		git, err = gitserver.Start(filepath.Join(work, "git"))
		return err
	})
}
