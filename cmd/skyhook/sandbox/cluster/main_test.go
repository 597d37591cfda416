package cluster_test

import (
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/clustertest"
)

// The harness tests share one cluster of nodeCount nodes, each with labels,
// a bootID and (every tenth node) a taint of the test's choosing.
const nodeCount = 50

var env *cluster.Cluster

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		runChild() // for TestKilledOwnerTakesTheClusterWithIt
		return
	}
	os.Exit(clustertest.Main(m, cluster.Options{Nodes: testNodes()}, &env))
}

func testNodes() []simnode.Node {
	nodes := make([]simnode.Node, nodeCount)
	for i := range nodes {
		nodes[i] = simnode.Node{
			Name:   fmt.Sprintf("worker-%02d", i),
			Labels: map[string]string{"pool": fmt.Sprintf("pool-%d", i%5)},
			BootID: fmt.Sprintf("boot-%02d-a", i),
		}
		if i%10 == 0 {
			nodes[i].Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}
		}
	}
	return nodes
}
