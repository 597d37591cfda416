// Package e2e runs the whole GitOps path for real: a Git server
// (git-http-backend), Flux's source-controller built from the module proxy,
// an in-process OCI registry, the operator, and KWOK nodes.
package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

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
)

const operatorNamespace = "skyhook-system"

func TestMain(m *testing.M) {
	ctx := context.Background()
	// Built before the cluster starts, so its clock does not run meanwhile
	// (about 3 minutes the first time, cached after).
	sc, err := binaries.EnsureSourceController(ctx, binaries.Options{Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	crds, err := testenv.CRDsWithControllers(sc)
	if err != nil {
		panic(err)
	}
	gitRoot, err := os.MkdirTemp("", "skyhook-git-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(gitRoot)
	os.Exit(clustertest.Main(m, cluster.Options{CRDs: crds, Nodes: simnode.Numbered("e2e", 3, map[string]string{"pool": "e2e"})}, &env,
		func(ctx context.Context, c *cluster.Cluster) error {
			if err := c.StartSourceController(ctx, sc); err != nil {
				return err
			}
			if git, err = gitserver.Start(gitRoot); err != nil {
				return err
			}
			return operatortest.Start(ctx, c, operator.Options{Namespace: operatorNamespace})
		}))
}

func k8sClient(t testing.TB) client.Client { return testenv.Client(t, env) }
