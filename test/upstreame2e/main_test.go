// Package upstreame2e runs NodeWright's end-to-end scenarios (its chainsaw
// suite, k8s-tests/chainsaw at 71ca22b8) against this operator: one test
// function per scenario, in upstream's order, one after another as upstream
// runs them (--parallel 1), each translating its chainsaw-test.yaml step by
// step and evaluating upstream's own manifests and assert files (kept byte
// for byte in test/reference/nodewright) with chainsaw's semantics
// (package chainsaw). Beside them, for the NodeWright kind, the scenarios
// of its v0.20 suite that could be read (nodewright_*_test.go; which ones,
// and from where, in test/reference/nodewright/README.md, and for
// deployment-policy/ test/reference/nodewright-v0.20/README.md), with the
// operator's namespace and the test node's label as that suite names them
// (upstreamNodeWrightNamespace, nodeWrightTestNodeLabel).
//
// The cluster is upstream's kind cluster played by KWOK nodes of the same
// names and labels; the operator runs in the test process as upstream's
// runs outside its cluster (make run), in namespace skyhook, its metrics on
// a loopback port for the metrics_test.py checks; the CLI steps run this
// project's skyhook binary where upstream runs its kubectl plugin. KWOK
// plays upstream's agentless test image (SLEEP_LEN, EXIT_CODE; see
// docs/testing.md).
//
// Documents that assert the shape of NodeWright's stage pods, Jobs or
// ConfigMaps are skipped, each by name, with the reason (the list in
// skipped_test.go).
package upstreame2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/clustertest"
	"github.com/skyhook-go/skyhook/test/operatortest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// Namespace is upstream's operator namespace, where its stage pods and the
// documents of its asserts live.
const namespace = "skyhook"

// The node label upstream's setup (make setup-kind-cluster) puts on
// kind-worker, which every scenario of the skyhook/ and cli/ suites
// selects; since the rename (v0.18) its setup and scenarios use the same
// label under nodewright.nvidia.com, which kind-worker carries too, so
// that the scenarios of both eras find it.
const (
	testNodeLabel, testNodeValue = "skyhook.nvidia.com/test-node", "skyhooke2e"
	nodeWrightTestNodeLabel      = "nodewright.nvidia.com/test-node"
)

// upstreamNodeWrightNamespace is the namespace NodeWright v0.18+ installs
// its operator in, which its v0.20 scenarios name for the operator's pods
// and ConfigMaps. One operator runs here for the whole suite, in
// namespace (skyhook, as upstream's earlier scenarios want), and the
// operator's namespace is where an install puts it, not a behaviour: so a
// manifest or document naming nodewright is applied or looked for in
// namespace (steps_test.go, inNamespace and inOperatorNamespace).
const upstreamNodeWrightNamespace = "nodewright"

// operatorVersion is the version the operator under test says it is.
const operatorVersion = "v0.0.0-upstreame2e"

var (
	env *cluster.Cluster
	// cliPath is this project's CLI, standing in for upstream's
	// ../skyhook-cli.
	cliPath string
	// metricsURL is the operator's metrics endpoint (upstream's
	// metrics_test.py default is http://127.0.0.1:8080/metrics).
	metricsURL string
	// initialNodes is every node as created, for resetting them between
	// scenarios.
	initialNodes map[string]corev1.Node
)

// workers is how many workers the cluster has: upstream's skyhook/ and cli/
// suites run on two (operator/config/local-dev/kind-config.yaml), its
// deployment-policy/ suite on fifteen (its kind-config.yaml). Named as kind
// names them, the fifteen include the two, and label-nodes.sh (every node
// but the control plane, sorted by name) finds them in the order it finds
// upstream's: kind-worker, kind-worker10 ... kind-worker15, kind-worker2 ...
// kind-worker9.
const workers = 15

// kindNodes are upstream's kind cluster with the labels and taints kind
// gives its nodes, and the test-node label its setup (make
// setup-kind-cluster) adds to kind-worker.
func kindNodes() []simnode.Node {
	common := func(extra map[string]string) map[string]string {
		labels := map[string]string{
			"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
		}
		for k, v := range extra {
			labels[k] = v
		}
		return labels
	}
	nodes := []simnode.Node{
		{
			Name: "kind-control-plane",
			Labels: common(map[string]string{
				"node-role.kubernetes.io/control-plane":                   "",
				"node.kubernetes.io/exclude-from-external-load-balancers": "",
			}),
			Taints: []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}},
		},
		{Name: "kind-worker", Labels: common(map[string]string{testNodeLabel: testNodeValue, nodeWrightTestNodeLabel: testNodeValue})},
	}
	for i := 2; i <= workers; i++ {
		nodes = append(nodes, simnode.Node{Name: fmt.Sprintf("kind-worker%d", i), Labels: common(nil)})
	}
	return nodes
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	crds, err := config.CRDs()
	if err != nil {
		panic(err)
	}
	bin, err := os.MkdirTemp("", "upstreame2e-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(bin)
	// Built before the cluster starts, so its clock does not run meanwhile.
	cliPath = filepath.Join(bin, "skyhook")
	if err := testenv.BuildCLI(cliPath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	port, err := freePort()
	if err != nil {
		panic(err)
	}
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", port)
	// A release's version, as upstream's make run stamps its operator with
	// its last tag (a build from a work tree says "devel", which upstream's
	// `length(version annotation) >= 6` checks take for absent).
	operator.Version = operatorVersion
	metricsURL = "http://" + metricsAddr + "/metrics"
	return clustertest.Main(m, cluster.Options{CRDs: crds, Nodes: kindNodes(), Scheduler: true}, &env,
		func(ctx context.Context, c *cluster.Cluster) error {
			c.SimulateHosts(ctx, time.Second) // reboots for interrupt pods that ask for one
			if err := snapshotNodes(ctx, c); err != nil {
				return err
			}
			// NodeWright's container shape (--stage-containers=nodewright):
			// its assert files and scenarios read stage pods' containers
			// by its names, <package>-<stage>check among them.
			return operatortest.Start(ctx, c, operator.Options{Namespace: namespace, MetricsAddr: metricsAddr, StageShape: stagepod.NodeWright})
		})
}

func snapshotNodes(ctx context.Context, c *cluster.Cluster) error {
	list, err := c.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	initialNodes = map[string]corev1.Node{}
	for _, n := range list.Items {
		initialNodes[n.Name] = n
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
