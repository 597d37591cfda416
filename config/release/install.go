package release

import (
	"fmt"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/skyhook-go/skyhook/config/helm"
)

// The install files: the chart rendered for `kubectl apply -f`, with the
// values of the kustomize bases (config/helm/render), so each is the
// matching base at the release's version (TestInstallFilesAreTheBases).
const (
	InstallFile            = "install.yaml"
	InstallCertManagerFile = "install-certmanager.yaml"
)

// writeInstalls renders the stamped chart for the release skyhook-operator
// in skyhook-system, which it creates, once with self-managed certificates
// and once with cert-manager's.
func writeInstalls(w *writer, ch *chart.Chart, registry string) error {
	for _, install := range []struct {
		file        string
		certManager bool
	}{{InstallFile, false}, {InstallCertManagerFile, true}} {
		values := installValues(registry, install.certManager)
		rendered, err := helm.Render(ch, helm.Default, values)
		if err != nil {
			return fmt.Errorf("%s: %w", install.file, err)
		}
		header := fmt.Sprintf("# Skyhook %s: the Helm chart skyhook-operator %s rendered for the release %s in %s.\n# values: %v\n",
			ch.Metadata.AppVersion, ch.Metadata.Version, helm.Default.Name, helm.Default.Namespace, values)
		if _, err := w.put(install.file, []byte(header+rendered.YAML())); err != nil {
			return err
		}
	}
	return nil
}

// installValues are the kustomize bases' values, and the images' repositories
// under the registry (the chart's defaults for DefaultRegistry), so that a
// release made for a mirror installs from it. Hooks are not rendered: the
// chart's pre-delete cleanup is for `helm uninstall` (docs/install.md says
// what to run before `kubectl delete`).
func installValues(registry string, certManager bool) map[string]any {
	values := helm.Base{CertManager: certManager}.Values()
	values["controllerManager"] = map[string]any{"manager": map[string]any{
		"image": map[string]any{"repository": registry + "/skyhook-operator"},
		"agent": map[string]any{"repository": registry + "/skyhook-agent"},
	}}
	return values
}
