package packageset_test

import (
	"context"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/test/clustertest"
	"github.com/skyhook-go/skyhook/test/operatortest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// The PackageSet tests run the real operator (its webhooks judge the dry
// runs, its Skyhook reconciler makes applied Skyhooks Ready) against the
// real apiserver with Flux's source CRDs installed; a test plays
// source-controller by writing the GitRepository's artifact.

var env *cluster.Cluster

func TestMain(m *testing.M) {
	crds, err := testenv.CRDsWithFlux()
	if err != nil {
		panic(err)
	}
	os.Exit(clustertest.Main(m, cluster.Options{CRDs: crds}, &env, func(ctx context.Context, c *cluster.Cluster) error {
		return operatortest.Start(ctx, c, operator.Options{Namespace: "skyhook-system"})
	}))
}

func k8sClient(t testing.TB) client.Client { return testenv.Client(t, env) }

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, what, time.Minute, cond)
}
