package testenv

import (
	"fmt"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/config"
)

// CRDsAnd are the operator's CRDs and those in files (for example every
// CRD a Flux controller built into the cache needs to start).
func CRDsAnd(files []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := config.CRDs()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
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
