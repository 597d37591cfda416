// Package helm renders the operator's Helm chart (skyhook-operator/) with
// the Helm SDK, the way `helm template` does: for `make generate`, which
// writes the kustomize bases in config/default and config/certmanager from
// it (one source for both install paths), and for the tests.
package helm

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// ChartDir is the chart's folder beside this file, named like the chart
// (helm lint wants them equal).
const ChartDir = "skyhook-operator"

// all: keeps templates/_helpers.tpl and .helmignore, which embed would
// otherwise leave out.
//
//go:embed all:skyhook-operator
var chartFiles embed.FS

// Release names what `helm install NAME -n NAMESPACE` would.
type Release struct {
	Name      string
	Namespace string
}

// Default is the release the kustomize bases are rendered for, and the one
// the docs install.
var Default = Release{Name: "skyhook-operator", Namespace: "skyhook-system"}

// Base is a kustomize base in config/ that `make generate` renders from the
// chart for the Default release; a release's install files are the same
// renders at its version.
type Base struct {
	// Dir is the base's folder under config/.
	Dir string
	// CertManager: certificates from cert-manager, not self-managed.
	CertManager bool
}

// Bases are config/default and config/certmanager.
var Bases = []Base{{Dir: "default"}, {Dir: "certmanager", CertManager: true}}

// Values are the values the base is rendered with: a labelled namespace,
// since kustomize applies everything at once, and the certificate mode.
func (b Base) Values() map[string]any {
	values := map[string]any{"namespace": map[string]any{"create": true}}
	if b.CertManager {
		values["webhook"] = map[string]any{"certManager": map[string]any{"enabled": true}}
	}
	return values
}

// Rendered is a chart rendered for one release: the manifests in the order
// Helm installs them, and the hooks it runs around that.
type Rendered struct {
	Manifests []releaseutil.Manifest
	Hooks     []*release.Hook
	// Notes is what `helm install` prints afterwards (NOTES.txt).
	Notes string
}

// Load reads the embedded chart.
func Load() (*chart.Chart, error) {
	var files []*loader.BufferedFile
	err := fs.WalkDir(chartFiles, ChartDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := chartFiles.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: strings.TrimPrefix(path, ChartDir+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return loader.LoadFiles(files)
}

// Render renders the chart for rel with values over the chart's defaults,
// checking them against values.schema.json as `helm install` does.
func Render(ch *chart.Chart, rel Release, values map[string]any) (*Rendered, error) {
	options := chartutil.ReleaseOptions{Name: rel.Name, Namespace: rel.Namespace, Revision: 1, IsInstall: true}
	renderValues, err := chartutil.ToRenderValues(ch, values, options, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, renderValues)
	if err != nil {
		return nil, err
	}
	notes := ""
	for name, text := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			notes = text
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, chartutil.DefaultCapabilities.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return nil, fmt.Errorf("rendered manifests: %w", err)
	}
	return &Rendered{Manifests: manifests, Hooks: hooks, Notes: notes}, nil
}

// YAML is the manifests as one multi-document stream, in install order.
func (r *Rendered) YAML() string {
	var b strings.Builder
	for _, m := range r.Manifests {
		b.WriteString("---\n")
		b.WriteString(strings.TrimSpace(m.Content))
		b.WriteString("\n")
	}
	return b.String()
}

// Kinds lists kind/name of every manifest, sorted, for messages and tests.
func (r *Rendered) Kinds() []string {
	var out []string
	for _, m := range r.Manifests {
		out = append(out, m.Head.Kind+"/"+m.Head.Metadata.Name)
	}
	sort.Strings(out)
	return out
}
