package testenv

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/config"
)

// FluxSourceVersion is the source-controller whose CRDs the tests install
// (its api module is what the operator is built against).
const FluxSourceVersion = "v1.9.5"

// FluxSourceCRDs are Flux's GitRepository and OCIRepository CRDs, read from
// the source-controller module, which `go mod download` fetches from the
// module proxy into the module cache.
func FluxSourceCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/fluxcd/source-controller@"+FluxSourceVersion).Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download source-controller: %w", err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return nil, fmt.Errorf("go mod download source-controller: %s %v", mod.Error, err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, kind := range []string{"gitrepositories", "ocirepositories"} {
		data, err := os.ReadFile(filepath.Join(mod.Dir, "config", "crd", "bases", "source.toolkit.fluxcd.io_"+kind+".yaml"))
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("%s CRD: %w", kind, err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// CRDsWithFlux are the operator's CRDs and Flux's source CRDs, for test
// packages that run PackageSets.
func CRDsWithFlux() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := config.CRDs()
	if err != nil {
		return nil, err
	}
	flux, err := FluxSourceCRDs()
	if err != nil {
		return nil, err
	}
	return append(crds, flux...), nil
}
