// Package fluxkustomize runs what a Flux user runs: Skyhook manifests in
// Git, applied by Flux's own kustomize-controller from a GitRepository of
// the real source-controller, health checked as docs/api.md says, and read
// with the real flux CLI (flux get, flux tree), against the operator and
// KWOK nodes.
package fluxkustomize

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/gitserver"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/clustertest"
	"github.com/skyhook-go/skyhook/test/operatortest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

var (
	env *cluster.Cluster
	git *gitserver.Server
	// fluxCLI is the path of the flux command.
	fluxCLI string
)

// Each test rolls out on its own pool of nodes, so one test's Skyhooks do
// not take another's budget.
const (
	rolloutPool = "rollout"
	failurePool = "failure"
	renamePool  = "rename"
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// Built before the cluster starts, so its clock does not run meanwhile
	// (minutes the first time, cached after; make prepare builds them).
	ctx := context.Background()
	opts := binaries.Options{Log: os.Stderr}
	sc, err := binaries.EnsureSourceController(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kc, err := binaries.EnsureKustomizeController(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if fluxCLI, err = binaries.EnsureFluxCLI(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	crds, err := testenv.CRDsWithControllers(sc, kc)
	if err != nil {
		panic(err)
	}
	gitRoot, err := os.MkdirTemp("", "skyhook-git-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(gitRoot)
	nodes := append(simnode.Numbered(rolloutPool, 3, map[string]string{"pool": rolloutPool}),
		simnode.Numbered(failurePool, 3, map[string]string{"pool": failurePool})...)
	nodes = append(nodes, simnode.Numbered(renamePool, 2, map[string]string{"pool": renamePool})...)
	return clustertest.Main(m, cluster.Options{CRDs: crds, Nodes: nodes}, &env,
		func(ctx context.Context, c *cluster.Cluster) error {
			if err := c.StartSourceController(ctx, sc); err != nil {
				return err
			}
			if err := c.StartKustomizeController(ctx, kc); err != nil {
				return err
			}
			if git, err = gitserver.Start(gitRoot); err != nil {
				return err
			}
			return operatortest.Start(ctx, c, operator.Options{Namespace: "skyhook-system"})
		})
}
