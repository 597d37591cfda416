// Package realnode runs stage pods on a real node: containerd and a real
// kubelet (cluster.AddRealNode) beside two KWOK nodes, the operator in the
// test process, and real images (the agent built from this repository, a
// pause image and shell-script packages made from Debian's busybox-static)
// served from in-process registries on loopback, one of them behind basic
// auth that the stage pods pass with an image pull secret.
//
// The packages' steps run chrooted into this machine's root, as on a
// node; they write only under hostDir, a directory the tests own and
// remove, and the operator's copies under /var/lib/skyhook/<skyhook> are
// removed with each Skyhook. Reboots and systemd are not real: the
// interrupts run a recording stand-in for systemctl (SKYHOOK_SYSTEMCTL).
//
// The real node runs containerd built from the module proxy
// (binaries.ContainerdVersion), so its stage pods mount their package
// images (image volumes) and have no copy container; the sandbox's and the
// virtual machines' real nodes run Debian's containerd 1.6 and keep it, so
// both ways run on a real kubelet.
//
// The operator runs with its defaults (and a short stage timeout).
//
// It needs root and containerd, runc and the CNI plugins (make
// real-node-deps installs them); without them every test skips and says
// why.
package realnode

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/clustertest"
	"github.com/skyhook-go/skyhook/test/operatortest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

const (
	namespace = "skyhook"
	// pullSecret holds the private registry's credentials; the operator
	// gives it to every stage pod.
	pullSecret = "private-registry"
	// stageTimeout is short so that TestStageOverItsDeadline waits little;
	// the other stages take seconds.
	stageTimeout = 30 * time.Second
)

// stageContainers is the operator's --stage-containers, for the benchmark
// to compare the shapes on the real kubelet (docs/rollout.md).
var stageContainers = flag.String("stage-containers", "", "the operator's --stage-containers: compact (the default) or nodewright")

// containerd is the real node's containerd: built from the module proxy
// (binaries.ContainerdVersion, which mounts image volumes: stage pods
// have no copy container) or the machine's (Debian's 1.6: they keep it),
// for the benchmark to compare the two (docs/rollout.md).
var containerd = flag.String("containerd", "built", "the real node's containerd: built (from the module proxy, image volumes) or machine (Debian's)")

var (
	env  *cluster.Cluster
	node *kubeletnode.Node
	// public serves the agent and pause images; private, behind basic
	// auth, the packages.
	public, private *nodeimages.Registry
	busybox         string
	// hostDir is where the packages' steps write on this machine.
	hostDir string
	cliPath string
	// skipReason is why the tests cannot run here, if they cannot.
	skipReason string
)

func TestMain(m *testing.M) {
	if err := kubeletnode.Supported(); err != nil {
		skipReason = err.Error()
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	var err error
	if busybox, err = nodeimages.Busybox(ctx, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if hostDir, err = os.MkdirTemp("", "skyhook-realnode-host-"); err != nil {
		panic(err)
	}
	defer os.RemoveAll(hostDir)
	bin, err := os.MkdirTemp("", "skyhook-realnode-cli-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(bin)
	cliPath = filepath.Join(bin, "skyhook")
	if err := testenv.BuildCLI(cliPath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	images, err := startRegistries(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer public.Close()
	defer private.Close()
	crds, err := config.CRDs()
	if err != nil {
		panic(err)
	}
	return clustertest.Main(m, cluster.Options{CRDs: crds, Nodes: simnode.Numbered("sim", 2, nil)}, &env,
		func(ctx context.Context, c *cluster.Cluster) error {
			if *containerd != "built" && *containerd != "machine" {
				return fmt.Errorf("-containerd=%q: want built or machine", *containerd)
			}
			if node, err = c.AddRealNode(ctx, kubeletnode.Options{
				Name: "real-node", PauseImage: images.pause, Registries: []string{public.Host(), private.Host()},
				BuiltContainerd: *containerd == "built",
			}); err != nil {
				return err
			}
			if err := operator.EnsureNamespace(ctx, c.Config, namespace); err != nil {
				return err
			}
			if err := createPullSecret(ctx, c); err != nil {
				return err
			}
			shape, err := stagepod.ParseShape(*stageContainers)
			if err != nil {
				return err
			}
			return operatortest.Start(ctx, c, operator.Options{Namespace: namespace,
				AgentImage: images.agent, PauseImage: images.pause, ImagePullSecrets: []string{pullSecret},
				StageTimeout: stageTimeout, StageShape: shape})
		})
}

// images are the references the operator runs its stage pods with.
type images struct{ agent, pause string }

const (
	privateUser, privatePassword = "skyhook-test", "s3cret-for-the-test"
)

// startRegistries starts both registries and pushes the agent and pause
// images.
func startRegistries(ctx context.Context) (images, error) {
	var out images
	var err error
	if public, err = nodeimages.StartRegistry(nodeimages.RegistryOptions{}); err != nil {
		return out, err
	}
	if private, err = nodeimages.StartRegistry(nodeimages.RegistryOptions{Username: privateUser, Password: privatePassword}); err != nil {
		return out, err
	}
	agent, err := nodeimages.AgentImage(ctx, os.Stderr)
	if err != nil {
		return out, fmt.Errorf("building the agent image: %w", err)
	}
	if out.agent, err = public.Push(ctx, "skyhook/agent:test", agent); err != nil {
		return out, err
	}
	pause, err := nodeimages.Pause(busybox)
	if err != nil {
		return out, err
	}
	if out.pause, err = public.Push(ctx, "skyhook/pause:test", pause); err != nil {
		return out, err
	}
	return out, nil
}

func createPullSecret(ctx context.Context, c *cluster.Cluster) error {
	_, err := c.Clientset.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: pullSecret, Namespace: namespace},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: nodeimages.DockerConfigJSON(private.Host(), privateUser, privatePassword)},
	}, metav1.CreateOptions{})
	return err
}

// needRealNode skips a test on a machine that cannot run the real node.
func needRealNode(t testing.TB) {
	t.Helper()
	if skipReason != "" {
		t.Skipf("no real node on this machine: %s", skipReason)
	}
}
