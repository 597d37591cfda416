package sandbox

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/chartinstall"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/monitoring"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/config/helm"
)

// With --real-nodes N the supervisor runs the operator as users install
// it: N real nodes (kubelet, containerd and kube-proxy each) on a network
// of their own, the operator and agent images built from this tree and
// served by a registry on this machine, the chart installed with Helm's
// SDK (its two replicas on the real nodes, webhooks through their
// Service), and Prometheus as a pod scraping them with its token. The
// real demo then rolls its package over every real node.

// prometheusFile holds the URL of the sandbox's Prometheus.
const prometheusFile = "prometheus-url"

// installedVersion stamps the images the sandbox builds of this tree.
const installedVersion = "sandbox"

// realNodes are the names of the real nodes the options ask for: the
// --real-node one, or real-1 … real-N with --real-nodes N, or none.
func (o Options) realNodes() []string {
	if o.RealNode {
		return []string{RealNodeName}
	}
	names := make([]string, o.RealNodes)
	for i := range names {
		names[i] = fmt.Sprintf("real-%d", i+1)
	}
	return names
}

// prepareRealNodes builds in the foreground what the supervisor needs on
// top of a real node's: kube-proxy and Prometheus.
func prepareRealNodes(ctx context.Context, opts Options) error {
	if err := prepareRealNode(ctx, opts); err != nil {
		return err
	}
	if _, err := binaries.EnsureKubeProxy(ctx, binaries.Options{Log: opts.Out}); err != nil {
		return err
	}
	_, err := binaries.EnsurePrometheus(ctx, binaries.Options{Log: opts.Out})
	return err
}

// installedImages are the references of what the real nodes pull.
type installedImages struct{ operator, agent, pause, prometheus string }

// startRealNodes starts the registry with the images, adds the real nodes,
// installs the chart and starts Prometheus. The returned function stops
// the registry; Cluster.Stop stops the nodes and with them every pod.
func startRealNodes(ctx context.Context, c *cluster.Cluster, opts Options) (func(), error) {
	if err := os.RemoveAll(opts.path(realNodeHostDir)); err != nil {
		return nil, err
	}
	reg, err := nodeimages.StartRegistry(nodeimages.RegistryOptions{})
	if err != nil {
		return nil, err
	}
	stop := func() { _ = reg.Close() }
	imgs, err := pushInstalledImages(ctx, reg, opts)
	if err == nil {
		err = addRealNodes(ctx, c, opts, imgs.pause, reg.Host())
	}
	if err == nil {
		err = installChart(ctx, c, opts, imgs)
	}
	if err == nil {
		err = os.WriteFile(opts.path(registryFile), []byte(reg.Host()+"\n"), 0o644)
	}
	if err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// pushInstalledImages builds the operator and agent images of this tree as
// `make images` does (this machine's platform only), the pause, demo
// package and Prometheus images, and pushes them.
func pushInstalledImages(ctx context.Context, reg *nodeimages.Registry, opts Options) (installedImages, error) {
	var imgs installedImages
	fmt.Fprintln(opts.Out, "building the operator, agent, pause, demo package and Prometheus images and serving them on this machine")
	refs, err := reg.PushComponents(ctx, installedVersion)
	if err != nil {
		return imgs, err
	}
	// The chart takes a repository and a tag.
	imgs.operator, _, _ = strings.Cut(refs["operator"], "@")
	imgs.agent, _, _ = strings.Cut(refs["agent"], "@")
	busybox, err := nodeimages.Busybox(ctx, opts.Out)
	if err != nil {
		return imgs, err
	}
	if imgs.pause, err = pushPauseAndDemo(ctx, reg, busybox); err != nil {
		return imgs, err
	}
	prom, version, err := monitoring.Image(ctx, busybox, opts.Out)
	if err != nil {
		return imgs, err
	}
	imgs.prometheus, err = reg.Push(ctx, "tools/prometheus:"+version, prom)
	return imgs, err
}

// addRealNodes adds the real nodes, labelled type=real, pulling from the
// registry.
func addRealNodes(ctx context.Context, c *cluster.Cluster, opts Options, pause, registry string) error {
	for _, name := range opts.realNodes() {
		fmt.Fprintf(opts.Out, "adding the real node %s\n", name)
		if _, err := c.AddRealNode(ctx, kubeletnode.Options{Name: name, PauseImage: pause, Registries: []string{registry}}); err != nil {
			return fmt.Errorf("adding the real node %s: %w", name, err)
		}
	}
	return nil
}

// installChart installs the chart as docs/install.md says, into a
// namespace labelled for privileged pods, with the images of the
// registry, the operator's pods on the real nodes and Prometheus's
// ServiceAccount allowed to read its metrics; then starts Prometheus on
// the chart's ServiceMonitor and alert rules.
func installChart(ctx context.Context, c *cluster.Cluster, opts Options, imgs installedImages) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.namespace(), Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}}
	if _, err := c.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	values := map[string]any{
		"controllerManager": map[string]any{
			"selectors": map[string]any{kubeletnode.Label: kubeletnode.LabelValue}, // values are JSON types
			"manager": map[string]any{
				"image": map[string]any{"repository": imgs.operator, "tag": installedVersion},
				"agent": map[string]any{"repository": imgs.agent, "tag": installedVersion},
				"env":   map[string]any{"pauseImage": imgs.pause},
			},
		},
		"metrics": map[string]any{"addServiceAccountBinding": true},
	}
	cfg, err := chartinstall.Actions(c.Kubeconfig, opts.namespace(), opts.Out)
	if err != nil {
		return err
	}
	started := time.Now()
	fmt.Fprintf(opts.Out, "installing the operator's chart as the release %s in %s\n", chartinstall.ReleaseName, opts.namespace())
	if err := chartinstall.Install(cfg, opts.namespace(), values, 5*time.Minute); err != nil {
		return fmt.Errorf("helm install: %w", err)
	}
	fmt.Fprintf(opts.Out, "helm install --wait: %s\n", time.Since(started).Round(time.Second))
	return startPrometheus(ctx, c, opts, values, imgs.prometheus)
}

// startPrometheus runs Prometheus, on a real node, on the scrape job of the chart's
// ServiceMonitor and its alert rules, rendered with the install's values.
func startPrometheus(ctx context.Context, c *cluster.Cluster, opts Options, values map[string]any, image string) error {
	ch, err := helm.Load()
	if err != nil {
		return err
	}
	withMonitoring := maps.Clone(values)
	withMonitoring["serviceMonitor"] = map[string]any{"enabled": true}
	withMonitoring["prometheusRule"] = map[string]any{"enabled": true}
	rendered, err := helm.Render(ch, helm.Release{Name: chartinstall.ReleaseName, Namespace: opts.namespace()}, withMonitoring)
	if err != nil {
		return err
	}
	jobs, err := monitoring.ScrapeJobs(rendered, "15s")
	if err != nil {
		return err
	}
	rules, err := monitoring.RuleFile(rendered)
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.Out, "starting Prometheus")
	prom, err := monitoring.Deploy(ctx, c.Clientset, monitoring.Options{Image: image, NodeSelector: map[string]string{kubeletnode.Label: kubeletnode.LabelValue}, Jobs: jobs, Rules: rules, Interval: "15s"}, 3*time.Minute)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, monitoring.Log(ctx, c.Clientset))
	}
	return os.WriteFile(opts.path(prometheusFile), []byte(prom.URL+"\n"), 0o644)
}
