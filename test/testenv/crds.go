package testenv

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/config"
)

// CRDsWithControllers are the operator's CRDs and those of Flux controllers
// built into the cache, which refuse to start without every kind they serve.
func CRDsWithControllers(controllers ...*binaries.Controller) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := config.CRDs()
	if err != nil {
		return nil, err
	}
	for _, c := range controllers {
		more, err := c.CustomResourceDefinitions()
		if err != nil {
			return nil, err
		}
		crds = append(crds, more...)
	}
	return crds, nil
}
