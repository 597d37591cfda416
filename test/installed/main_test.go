// Package installed installs the operator as users install it and runs it
// as pods: the chart, installed with Helm's SDK (the install, upgrade and
// uninstall actions `helm` runs), on two real nodes (kubelet, containerd
// and kube-proxy each, on a network of their own) beside two KWOK nodes,
// with kube-scheduler placing the pods. The operator and agent images are
// built from this tree as `make images` builds them and pulled by the
// nodes from a registry on this machine behind basic auth, with a pull
// secret. The webhooks are reached through their Service, the apiserver
// through the kubernetes Service.
//
// It needs root and containerd, runc and the CNI plugins (make
// real-node-deps); without them every test skips and says why.
package installed

import (
	"context"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/clustertest"
)

const (
	namespace  = "skyhook-system"
	pullSecret = "registry-auth"
	// fleetLabel is on every node, real and simulated: the rollouts' selector.
	fleetLabel = "fleet"

	registryUser, registryPassword = "skyhook-installer", "pulled-with-a-secret"
)

var (
	env *cluster.Cluster
	// reg, behind basic auth, serves the operator, agent and package
	// images; public the pause image, which containerd pulls for a pod's
	// sandbox without the pod's pull secret.
	reg, public *nodeimages.Registry
	busybox     string
	// pause is the pause image's reference in reg.
	pause string
	// realNodes are the real nodes' names.
	realNodes = []string{"real-a", "real-b"}
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
	if reg, err = nodeimages.StartRegistry(nodeimages.RegistryOptions{Username: registryUser, Password: registryPassword}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer reg.Close()
	if public, err = nodeimages.StartRegistry(nodeimages.RegistryOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer public.Close()
	pauseImage, err := nodeimages.Pause(busybox)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if pause, err = public.Push(ctx, "skyhook/pause:test", pauseImage); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fleet := map[string]string{fleetLabel: "all"}
	return clustertest.Main(m, cluster.Options{Nodes: simnode.Numbered("sim", 2, fleet), RealNodeNetwork: true, Scheduler: true}, &env,
		func(ctx context.Context, c *cluster.Cluster) error {
			for _, name := range realNodes {
				if _, err := c.AddRealNode(ctx, kubeletnode.Options{Name: name, Labels: fleet, PauseImage: pause, Registries: []string{reg.Host(), public.Host()}}); err != nil {
					return err
				}
			}
			return makeNamespace(ctx, c)
		})
}

// makeNamespace makes the operator's namespace, labelled for privileged
// pods as docs/install.md says, with the registry's pull secret: before an
// install, as an admin would (a kustomize uninstall deletes it).
func makeNamespace(ctx context.Context, c *cluster.Cluster) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}}
	if _, err := c.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err := c.Clientset.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: pullSecret, Namespace: namespace},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: nodeimages.DockerConfigJSON(reg.Host(), registryUser, registryPassword)},
	}, metav1.CreateOptions{})
	return err
}

// needRealNodes skips a test on a machine that cannot run real nodes.
func needRealNodes(t testing.TB) {
	t.Helper()
	if skipReason != "" {
		t.Skipf("no real node on this machine: %s", skipReason)
	}
}

// build is one build of the operator and agent images, version-stamped.
type build struct{ version, operator, agent string }

// buildImages builds the operator and agent images of this tree for this
// machine's platform, stamped with version, as `make images` builds them,
// and pushes them to reg.
func buildImages(t testing.TB, version string) build {
	t.Helper()
	refs, err := reg.PushComponents(context.Background(), version)
	if err != nil {
		t.Fatal(err)
	}
	return build{version: version, operator: refs["operator"], agent: refs["agent"]}
}
