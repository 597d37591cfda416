package binaries

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The Flux releases the GitOps tests run, one generation: source-controller's
// api module is the one the operator uses, and the CLI's api modules are
// these controllers'.
const (
	SourceControllerVersion    = "v1.9.5"
	KustomizeControllerVersion = "v1.9.5"
	FluxCLIVersion             = "v2.9.5"
)

// Controller is a Flux controller built into the cache (once per version,
// minutes, when a GitOps test first asks for it; the other tests never
// need it): its binary and the CustomResourceDefinition files of its kinds.
type Controller struct {
	Binary string
	CRDs   []string
}

// CustomResourceDefinitions reads the controller's CRD files, to install
// before it starts (it refuses to start without every kind it serves).
func (c *Controller) CustomResourceDefinitions() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range c.CRDs {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// EnsureSourceController builds source-controller into the cache unless it
// is there.
func EnsureSourceController(ctx context.Context, opts Options) (*Controller, error) {
	return ensureController(ctx, opts, sourceControllerRecipe(SourceControllerVersion))
}

// EnsureKustomizeController builds kustomize-controller into the cache
// unless it is there.
func EnsureKustomizeController(ctx context.Context, opts Options) (*Controller, error) {
	return ensureController(ctx, opts, kustomizeControllerRecipe(KustomizeControllerVersion))
}

// EnsureFluxCLI builds the flux command into the cache unless it is there,
// and returns its path.
func EnsureFluxCLI(ctx context.Context, opts Options) (string, error) {
	dir, err := ensureFlux(ctx, opts, fluxCLIRecipe(FluxCLIVersion))
	return filepath.Join(dir, "flux"), err
}

// ensureController builds a controller's recipe, whose files are its CRDs.
func ensureController(ctx context.Context, opts Options, r recipe) (*Controller, error) {
	dir, err := ensureFlux(ctx, opts, r)
	if err != nil {
		return nil, err
	}
	c := &Controller{Binary: filepath.Join(dir, r.name)}
	for _, name := range r.files {
		c.CRDs = append(c.CRDs, filepath.Join(dir, name))
	}
	return c, nil
}

// ensureFlux returns the cache directory of a Flux recipe, building it if
// needed.
func ensureFlux(ctx context.Context, opts Options, r recipe) (string, error) {
	if err := opts.withDefaults(); err != nil {
		return "", err
	}
	dir, err := ensure(ctx, opts, r)
	if err != nil {
		return "", fmt.Errorf("building %s %s: %w", r.name, r.version, err)
	}
	return dir, nil
}

// crdFiles copies each of a module's config/crd/bases files under its own
// name.
func crdFiles(names ...string) map[string]string {
	files := map[string]string{}
	for _, name := range names {
		files["config/crd/bases/"+name] = name
	}
	return files
}

// sourceControllerRecipe builds Flux's source-controller with its CRDs: it
// runs a controller for each of its kinds, so all must be installed. Its
// own go.mod replaces its api module with a local directory and pins
// modules the proxy serves under other versions; the wrapper states the
// same replaces with published versions.
func sourceControllerRecipe(version string) recipe {
	return recipe{
		name:    "source-controller",
		version: version,
		module:  "github.com/fluxcd/source-controller",
		replaces: func(context.Context, io.Writer) (map[string]string, error) {
			return map[string]string{
				"github.com/fluxcd/source-controller/api": version,
				"github.com/opencontainers/go-digest":     "v1.0.1-0.20220411205349-bde1400a84be",
				"github.com/fluxcd/pkg/artifact":          "v0.18.1",
			}, nil
		},
		packages: []string{"github.com/fluxcd/source-controller"},
		files: crdFiles(
			"source.toolkit.fluxcd.io_buckets.yaml", "source.toolkit.fluxcd.io_externalartifacts.yaml",
			"source.toolkit.fluxcd.io_gitrepositories.yaml", "source.toolkit.fluxcd.io_helmcharts.yaml",
			"source.toolkit.fluxcd.io_helmrepositories.yaml", "source.toolkit.fluxcd.io_ocirepositories.yaml"),
		assign: func(*Set, string) {},
	}
}

// kustomizeControllerRecipe builds Flux's kustomize-controller with the
// Kustomization CRD, under its own go.mod's replaces (its api module, the
// go-digest with BLAKE3, kustomize's pinned release).
func kustomizeControllerRecipe(version string) recipe {
	module := "github.com/fluxcd/kustomize-controller"
	return recipe{
		name:     "kustomize-controller",
		version:  version,
		module:   module,
		replaces: ownReplaces(module, version),
		packages: []string{module},
		files:    crdFiles("kustomize.toolkit.fluxcd.io_kustomizations.yaml"),
		assign:   func(*Set, string) {},
	}
}

// fluxCLIRecipe builds the flux command. It embeds the install manifests
// (for flux install and bootstrap), which its Makefile generates and the
// module does not ship; a placeholder stands in, as the tests install the
// controllers themselves. The version is stamped as a release build does.
func fluxCLIRecipe(version string) recipe {
	module := "github.com/fluxcd/flux2/v2"
	return recipe{
		name:         "flux",
		version:      version,
		module:       module,
		replaces:     ownReplaces(module, version),
		packages:     []string{module + "/cmd/flux"},
		ldflags:      "-X main.VERSION=" + strings.TrimPrefix(version, "v"),
		placeholders: []string{"cmd/flux/manifests/placeholder.yaml"},
		assign:       func(*Set, string) {},
	}
}
