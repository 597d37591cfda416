package helm_test

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/config/helm"
	"github.com/skyhook-go/skyhook/test/clustertest"
)

var env *cluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(clustertest.Main(m, cluster.Options{}, &env))
}

// allOn reads testdata/all-on.yaml, the values that turn every option on.
func allOn(t *testing.T) map[string]any {
	t.Helper()
	values, err := readValues(filepath.Join("testdata", "all-on.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return values
}

// render renders the chart or fails the test.
func render(t *testing.T, rel helm.Release, values map[string]any) *helm.Rendered {
	t.Helper()
	ch, err := helm.Load()
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := helm.Render(ch, rel, values)
	if err != nil {
		t.Fatal(err)
	}
	return rendered
}

// installStandIns installs stand-ins of cert-manager's and the Prometheus
// Operator's CRDs, which the all-on values use.
func installStandIns(t *testing.T) {
	t.Helper()
	if err := env.InstallCRDs(envtest.CRDInstallOptions{Paths: []string{filepath.Join("testdata", "crds")}}); err != nil {
		t.Fatal(err)
	}
}
