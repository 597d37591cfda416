// Package config holds the deployable manifests of the operator: the
// generated CRDs (crd/bases) and RBAC (rbac), and samples. The CRDs are
// embedded so that the sandbox and tests install exactly what is in the repo.
package config

import (
	"embed"
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed crd/bases/*.yaml
var crdFiles embed.FS

// CRDs returns the operator's CustomResourceDefinitions.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(crdFiles, "crd/bases/*.yaml")
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		data, err := crdFiles.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}
