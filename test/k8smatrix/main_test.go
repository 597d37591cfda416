// Package k8smatrix checks the operator against one Kubernetes release: the
// CRDs install and are served, the webhooks and the schema's rules admit and
// refuse what they should, a small rollout with a reboot completes, and the
// apiserver is the release asked for. `make test-k8s-matrix` runs it once
// per release of K8S_VERSIONS, naming the release in SKYHOOK_K8S_VERSION;
// without it the package runs at binaries.DefaultVersions, as part of
// `go test ./...`.
package k8smatrix

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/test/clustertest"
	"github.com/skyhook-go/skyhook/test/operatortest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// VersionEnv names the k8s.io/kubernetes release (v1.X.Y) of the
// apiserver, controller-manager and kubectl to test against; etcd and KWOK
// stay at binaries.DefaultVersions.
const VersionEnv = "SKYHOOK_K8S_VERSION"

const operatorNamespace = "skyhook-system"

// pool labels the simulated nodes of the rollout.
const pool = "matrix"

var (
	env *cluster.Cluster
	// hosts reboots the nodes whose interrupt pods ask for it.
	hosts *simnode.HostSimulator
	// versions are the releases the cluster runs.
	versions = binaries.DefaultVersions
)

func TestMain(m *testing.M) {
	if v := os.Getenv(VersionEnv); v != "" {
		versions.Kubernetes = v
	}
	// Built before the cluster starts, and timed apart from the tests: a
	// release not in the cache yet takes about 7 minutes on two cores.
	start := time.Now()
	if _, err := binaries.Ensure(context.Background(), binaries.Options{Versions: versions, Log: os.Stderr}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "kubernetes %s binaries ready in %s\n", versions.Kubernetes, time.Since(start).Round(time.Second))
	crds, err := config.CRDs()
	if err != nil {
		panic(err)
	}
	os.Exit(clustertest.Main(m, cluster.Options{
		Binaries: binaries.Options{Versions: versions},
		CRDs:     crds,
		Nodes:    simnode.Numbered(pool, 3, map[string]string{"pool": pool}),
	}, &env, func(ctx context.Context, c *cluster.Cluster) error {
		hosts = c.SimulateHosts(ctx, time.Second)
		return operatortest.Start(ctx, c, operator.Options{Namespace: operatorNamespace})
	}))
}

func k8sClient(t testing.TB) client.Client { return testenv.Client(t, env) }
