package webhook_test

import (
	"context"
	"os"
	"testing"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/test/clustertest"
	"github.com/skyhook-go/skyhook/test/operatortest"
)

// The admission tests run the real apiserver calling the real operator's
// webhooks, served in this process with self-managed certificates.

var env *cluster.Cluster

const operatorNamespace = "skyhook-system"

func TestMain(m *testing.M) {
	crds, err := config.CRDs()
	if err != nil {
		panic(err)
	}
	os.Exit(clustertest.Main(m, cluster.Options{CRDs: crds}, &env, func(ctx context.Context, c *cluster.Cluster) error {
		// The pull secret admission reads registry credentials from
		// (admission_trust_test.go); it exists only while a test needs it.
		return operatortest.Start(ctx, c, operator.Options{Namespace: operatorNamespace, ImagePullSecrets: []string{trustPullSecret}})
	}))
}
