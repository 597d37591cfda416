// Package vmnode runs rollouts on nodes that are machines of their own:
// virtual machines under qemu (cluster.AddVMNode, package
// cmd/skyhook/sandbox/vmnode) booting Debian's kernel with systemd as
// PID 1, containerd and the project's kubelet, on disks of their own,
// joined to the cluster over the real nodes' network. The operator runs
// in the test process; the agent, pause and package images come from
// registries on this machine, which the machines reach at the network's
// gateway.
//
// Here what a package asks for really happens: a reboot restarts the
// guest kernel and the node comes back with another boot ID, a service
// interrupt restarts a systemd unit, the steps write to the machine's
// own /etc. What the machine did is read back by a pod on it that runs a
// command in the host's root (guestRun).
//
// It needs root, qemu, qemu-img, mmdebstrap and mkfs.ext4 (make
// vm-node-deps); without them every test skips and says why. The node image
// is built into the cache the first time (minutes).
package vmnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/vmnode"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/test/clustertest"
	"github.com/skyhook-go/skyhook/test/operatortest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

const namespace = "skyhook"

var (
	env *cluster.Cluster
	// machines are the virtual machine nodes.
	machines []*vmnode.Node
	// op is the operator, in this process; a test may restart it with
	// options of its own.
	op *operatortest.Operator
	// registry serves the agent, pause and package images.
	registry *nodeimages.Registry
	busybox  string
	images   struct{ agent, pause string }
	cliPath  string
	// skipReason is why the tests cannot run here, if they cannot.
	skipReason string
)

// machineCount is how many machines the tests boot: two, so that a step
// on one is seen to leave the other's disk alone.
const machineCount = 2

func TestMain(m *testing.M) {
	if err := vmnode.Supported(); err != nil {
		skipReason = err.Error()
		os.Exit(m.Run())
	}
	prioritize(-10)
	os.Exit(run(m))
}

// prioritize raises the CPU priority (lowers the nice value) of every
// thread of this process before it starts anything, so the control plane,
// the operator and qemu it starts inherit it, and Go's threads made later
// from these. The machines are emulated: in `make test` beside the other
// packages their boots, reboots and pods stretched (this package took over
// 45 minutes there, 33 alone), while what they need is CPU when they ask
// for it, not much of it (an idle machine's qemu uses about 30% of a
// core), so serving them first costs the other packages little. Root may
// lower a nice value; a thread that is gone meanwhile is skipped.
func prioritize(nice int) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice)
		}
	}
}

func run(m *testing.M) int {
	ctx := context.Background()
	var err error
	if busybox, err = nodeimages.Busybox(ctx, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bin, err := os.MkdirTemp("", "skyhook-vmnode-cli-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(bin)
	cliPath = filepath.Join(bin, "skyhook")
	if err := testenv.BuildCLI(cliPath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := startRegistry(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer registry.Close()
	crds, err := config.CRDs()
	if err != nil {
		panic(err)
	}
	return clustertest.Main(m, cluster.Options{CRDs: crds, Nodes: simnode.Numbered("sim", 1, nil), RealNodeNetwork: true, Log: os.Stderr,
		// The scheduler places the installed operator's pods.
		Scheduler: true,
		// The machines' kubelets renew a Lease every 10 s: a machine that
		// stays down is NotReady in Kubernetes' usual 50 s, not the 5 min
		// the simulated nodes' heartbeats need.
		Scale: cluster.Scale{NodeMonitorGracePeriod: 50 * time.Second}}, &env,
		func(ctx context.Context, c *cluster.Cluster) error {
			var opts []vmnode.Options
			for i := range machineCount {
				opts = append(opts, vmnode.Options{Name: fmt.Sprintf("vm-%d", i), PauseImage: images.pause, Registries: []string{registry.Host()}})
			}
			var err error
			if machines, err = c.AddVMNodes(ctx, opts...); err != nil {
				return err
			}
			if err := operator.EnsureNamespace(ctx, c.Config, namespace); err != nil {
				return err
			}
			op, err = operatortest.StartRestartable(ctx, c, operator.Options{Namespace: namespace, AgentImage: images.agent, PauseImage: images.pause})
			return err
		})
}

// startRegistry starts the registry and pushes the agent and pause images.
func startRegistry(ctx context.Context) error {
	var err error
	if registry, err = nodeimages.StartRegistry(nodeimages.RegistryOptions{}); err != nil {
		return err
	}
	agent, err := nodeimages.AgentImage(ctx, os.Stderr)
	if err != nil {
		return fmt.Errorf("building the agent image: %w", err)
	}
	if images.agent, err = registry.Push(ctx, "skyhook/agent:test", agent); err != nil {
		return err
	}
	pause, err := nodeimages.Pause(busybox)
	if err != nil {
		return err
	}
	images.pause, err = registry.Push(ctx, "skyhook/pause:test", pause)
	return err
}

// needMachines skips a test on a machine that cannot run the virtual
// machines.
func needMachines(t testing.TB) {
	t.Helper()
	if skipReason != "" {
		t.Skipf("no virtual machine nodes on this machine: %s", skipReason)
	}
}

// nodeOf is the machine's node as the apiserver has it.
func nodeOf(t testing.TB, m *vmnode.Node) *corev1.Node {
	t.Helper()
	n, err := env.Clientset.CoreV1().Nodes().Get(context.Background(), m.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
