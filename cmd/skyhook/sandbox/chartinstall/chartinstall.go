// Package chartinstall installs the operator's chart into a cluster with
// Helm's SDK: the actions `helm install`, `upgrade`, `rollback` and
// `uninstall` run, configured as `helm --kubeconfig K -n NS` is, releases
// kept in Secrets (Helm's default). The sandbox (--real-nodes) and
// test/installed install the operator this way, as an admin would.
package chartinstall

import (
	"fmt"
	"io"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/skyhook-go/skyhook/config/helm"
)

// ReleaseName is the release, as docs/install.md names it.
const ReleaseName = "skyhook-operator"

// Actions is Helm's SDK for the cluster of the kubeconfig, in namespace;
// Helm's progress goes to log.
func Actions(kubeconfig, namespace string, log io.Writer) (*action.Configuration, error) {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &namespace
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, namespace, "secret", func(format string, v ...any) { fmt.Fprintf(log, "helm: "+format+"\n", v...) }); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Install is `helm install skyhook-operator <chart> -n namespace --wait
// --timeout timeout` of the chart as it ships, with the values.
func Install(cfg *action.Configuration, namespace string, values map[string]any, timeout time.Duration) error {
	ch, err := helm.Load()
	if err != nil {
		return err
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = ReleaseName, namespace
	install.Wait, install.Timeout = true, timeout
	_, err = install.Run(ch, values)
	return err
}
