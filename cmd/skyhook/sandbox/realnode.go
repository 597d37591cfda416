package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
)

// With --real-node the supervisor also runs a real node (containerd and a
// kubelet, cluster.AddRealNode) beside the simulated ones, and a registry on
// loopback, in its own process, holding the images the node's stage pods
// run: this tree's agent, a pause image and the real demo's package. The
// real node carries only the label type=real: the demo Skyhook, and the
// quick-start Skyhook people apply, select the simulated nodes and name an
// image the node could not pull; the real demo selects type=real.

// RealNodeName is the real node's name.
const RealNodeName = "real-node"

// Files of the state directory for the real node.
const (
	// registryFile holds the address of the registry the real node pulls
	// from ("127.0.0.1:PORT").
	registryFile = "registry"
	// realNodeHostDir is where the real demo's package writes on this
	// machine (out/), and where the agent keeps its records and step logs.
	realNodeHostDir = "real-node-host"
)

// The real demo: a Skyhook with a shell-script package whose steps write
// files on this machine.
const (
	realDemoSkyhook = "real-demo"
	realDemoPackage = "hello-host"
	realDemoVersion = "1.0.0"
	realDemoRepo    = "demo/" + realDemoPackage
)

// prepareRealNode builds in the foreground what the supervisor would
// otherwise build silently: the kubelet (minutes, once), a static busybox
// (fetched with apt-get, once per machine) and the agent image (go build,
// quick once cached), which also fails here, early, outside this module's
// checkout.
func prepareRealNode(ctx context.Context, opts Options) error {
	if _, err := binaries.EnsureKubelet(ctx, binaries.Options{Log: opts.Out}); err != nil {
		return err
	}
	if _, err := nodeimages.Busybox(ctx, opts.Out); err != nil {
		return err
	}
	if _, err := nodeimages.AgentImage(ctx, nil); err != nil {
		return fmt.Errorf("--real-node builds the agent image from this module's source, so run skyhook from its checkout: %w", err)
	}
	return nil
}

// realNodeImages are the references of the stage pods' images.
type realNodeImages struct{ agent, pause string }

// startRealNode starts the registry, pushes the agent, pause and demo
// package images, and adds the real node. The returned function stops the
// registry; Cluster.Stop stops the node.
func startRealNode(ctx context.Context, c *cluster.Cluster, opts Options) (realNodeImages, func(), error) {
	// The agent's records from an earlier up would make it skip steps.
	if err := os.RemoveAll(opts.path(realNodeHostDir)); err != nil {
		return realNodeImages{}, nil, err
	}
	imgs, reg, err := serveStageImages(ctx, opts, "the real node's", realDemoRepo+":"+realDemoVersion, realDemoImage)
	if err != nil {
		return imgs, nil, err
	}
	stop := func() { _ = reg.Close() }
	if _, err := c.AddRealNode(ctx, kubeletnode.Options{Name: RealNodeName, PauseImage: imgs.pause, Registries: []string{reg.Host()}}); err != nil {
		stop()
		return imgs, nil, fmt.Errorf("adding the real node: %w", err)
	}
	if err := os.WriteFile(opts.path(registryFile), []byte(reg.Host()+"\n"), 0o644); err != nil {
		stop()
		return imgs, nil, err
	}
	fmt.Fprintf(opts.Out, "real node %s is Ready; its registry is %s\n", RealNodeName, reg.Host())
	return imgs, stop, nil
}

// pushPauseAndDemo pushes what every real node pulls besides the agent:
// the pause image, whose reference it returns, and the real demo's package.
func pushPauseAndDemo(ctx context.Context, reg *nodeimages.Registry, busybox string) (string, error) {
	return pushPauseAnd(ctx, reg, busybox, realDemoRepo+":"+realDemoVersion, realDemoImage)
}

// pushPauseAnd pushes the pause image and the demo package built from
// busybox as demoRef; it returns the pause image's reference.
func pushPauseAnd(ctx context.Context, reg *nodeimages.Registry, busybox, demoRef string, demo func(busybox string) (v1.Image, error)) (string, error) {
	pause, err := pushBuilt(ctx, reg, "skyhook/pause:sandbox", func() (v1.Image, error) { return nodeimages.Pause(busybox) })
	if err != nil {
		return "", err
	}
	_, err = pushBuilt(ctx, reg, demoRef, func() (v1.Image, error) { return demo(busybox) })
	return pause, err
}

// serveStageImages starts a registry on this machine serving what the
// stage pods of nodes that pull need: the agent and pause images and the
// demo package (demo, pushed as demoRef).
func serveStageImages(ctx context.Context, opts Options, whose, demoRef string, demo func(busybox string) (v1.Image, error)) (realNodeImages, *nodeimages.Registry, error) {
	var imgs realNodeImages
	fmt.Fprintf(opts.Out, "building %s images (agent, pause, demo package) and serving them on this machine\n", whose)
	busybox, err := nodeimages.Busybox(ctx, opts.Out)
	if err != nil {
		return imgs, nil, err
	}
	reg, err := nodeimages.StartRegistry(nodeimages.RegistryOptions{})
	if err != nil {
		return imgs, nil, err
	}
	if imgs.agent, err = pushBuilt(ctx, reg, "skyhook/agent:"+nodeimages.AgentVersion, func() (v1.Image, error) { return nodeimages.AgentImage(ctx, nil) }); err == nil {
		imgs.pause, err = pushPauseAnd(ctx, reg, busybox, demoRef, demo)
	}
	if err != nil {
		_ = reg.Close()
		return imgs, nil, err
	}
	return imgs, reg, nil
}

// pushBuilt builds an image and pushes it as repoAndTag, returning its
// reference by digest.
func pushBuilt(ctx context.Context, reg *nodeimages.Registry, repoAndTag string, build func() (v1.Image, error)) (string, error) {
	img, err := build()
	if err != nil {
		return "", fmt.Errorf("building %s: %w", repoAndTag, err)
	}
	return reg.Push(ctx, repoAndTag, img)
}

// removeRealDemoCopies removes the package copies that the real demo's
// stage pods left on this machine (/var/lib/skyhook/real-demo, see
// stagepod.Spec.CopyDir), and /var/lib/skyhook when that leaves it empty.
func removeRealDemoCopies() {
	_ = os.RemoveAll(filepath.Join("/var/lib/skyhook", realDemoSkyhook))
	_ = os.Remove("/var/lib/skyhook") // only when empty
}

// realDemoImage is the real demo's package: apply writes hello.txt, config
// copies the configMap's motd.txt, and their checks append to checks.log,
// all in $OUT on this machine (the steps run chrooted into its root).
func realDemoImage(busybox string) (v1.Image, error) {
	step := func(name, script string) nodeimages.ShellStep {
		return nodeimages.ShellStep{Name: name, Script: "set -eu\n" + script + "\n"}
	}
	spec, err := nodeimages.ShellPackage(busybox, realDemoPackage, realDemoVersion, map[string][]nodeimages.ShellStep{
		"apply": {step("write-hello", `mkdir -p "$OUT"
echo "hello from $SKYHOOK_PACKAGE $SKYHOOK_VERSION (Skyhook $SKYHOOK_NAME), applied on node $SKYHOOK_NODE_NAME" > "$OUT/hello.txt"`)},
		"apply-check": {step("hello-written", `grep -q "^hello from $SKYHOOK_PACKAGE $SKYHOOK_VERSION" "$OUT/hello.txt"
echo "apply-check: hello.txt says hello" >> "$OUT/checks.log"`)},
		"config": {step("copy-motd", `cp configmaps/motd.txt "$OUT/motd.txt"`)},
		"config-check": {step("motd-copied", `test "$(cat configmaps/motd.txt)" = "$(cat "$OUT/motd.txt")"
echo "config-check: motd.txt matches the configMap" >> "$OUT/checks.log"`)},
	})
	if err != nil {
		return nil, err
	}
	return nodeimages.Package(spec)
}

// realDemo is the Skyhook of the real demo: its package from the registry
// at host, on the real nodes only, writing under hostDir. Real nodes share
// this machine's root, so with several each writes under a directory of
// its name (the kubelet expands $(SKYHOOK_NODE_NAME), the stage pod's
// variable).
func realDemo(host, hostDir string, perNode bool) *skyhookv1.Skyhook {
	dir := func(name string) string {
		if perNode {
			return filepath.Join(hostDir, name, "$(SKYHOOK_NODE_NAME)")
		}
		return filepath.Join(hostDir, name)
	}
	return &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: realDemoSkyhook},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{kubeletnode.Label: kubeletnode.LabelValue}},
			Packages: map[string]skyhookv1.Package{realDemoPackage: {
				PackageRef: skyhookv1.PackageRef{Name: realDemoPackage, Version: realDemoVersion},
				Image:      host + "/" + realDemoRepo,
				Env: []corev1.EnvVar{
					{Name: "OUT", Value: dir("out")},
					// The agent's records and step logs, kept out of
					// /var/lib/skyhook and /var/log/skyhook.
					{Name: "SKYHOOK_ROOT_DIR", Value: dir("agent-state")},
					{Name: "SKYHOOK_LOG_DIR", Value: dir("agent-logs")},
				},
				ConfigMap: map[string]string{"motd.txt": "Welcome to real-node: this line came from the real-demo Skyhook's configMap.\n"},
			}},
		},
	}
}

// registryHost is the address of the real node's registry, when the
// sandbox runs one.
func registryHost(opts Options) (string, bool) {
	data, err := os.ReadFile(opts.path(registryFile))
	if err != nil {
		return "", false
	}
	host := strings.TrimSpace(string(data))
	return host, host != ""
}

// runRealDemo applies the real demo, shows its rollout until it is Ready,
// then what its steps wrote on this machine and which kubelet ran them.
func runRealDemo(ctx context.Context, c client.Client, opts Options) error {
	host, ok := registryHost(opts)
	if !ok {
		return fmt.Errorf("the supervisor did not say where the real node's registry is (%s)", opts.path(registryFile))
	}
	hostDir := opts.path(realNodeHostDir)
	perNode := opts.RealNodes > 0
	sk := realDemo(host, hostDir, perNode)
	if err := c.Create(ctx, sk); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("applying the real demo Skyhook: %w", err)
	}
	where := "on the real node"
	if perNode {
		where = "on the real nodes"
	}
	fmt.Fprintf(opts.Out, "\nRolling out the Skyhook %q %s (%s from %s): containerd runs its stage pods, and its steps run on this machine, as root:\n",
		sk.Name, where, packageLine(sk), host)
	if err := watchRollout(ctx, c, opts.Out, sk); err != nil {
		return err
	}
	for _, name := range opts.realNodes() {
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		out, logs := filepath.Join(hostDir, "out"), filepath.Join(hostDir, "agent-logs")
		if perNode {
			out, logs = filepath.Join(out, name), filepath.Join(logs, name)
		}
		fmt.Fprintf(opts.Out, "\nThe kubelet %s of node %s ran %s %s; its steps wrote on this machine:\n",
			node.Status.NodeInfo.KubeletVersion, name, realDemoPackage, realDemoVersion)
		if err := printHostFiles(opts.Out, out); err != nil {
			return err
		}
		fmt.Fprintf(opts.Out, "Step logs: %s\n", logs)
	}
	return nil
}

// printHostFiles prints each file of dir with its first lines.
func printHostFiles(w io.Writer, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s\n", path)
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 10 {
			lines = append(lines[:10], "...")
		}
		for _, l := range lines {
			fmt.Fprintf(w, "      %s\n", l)
		}
	}
	return nil
}
