// Package policies holds the image and package policies the operator ships:
// kyverno-json ValidatingPolicy documents, one per file, evaluated against
// every Skyhook by the admission webhook (see webhook/policy). Admins add or
// replace them at run time with ConfigMaps.
package policies

import (
	"embed"
	"io/fs"
)

//go:embed *.yaml
var files embed.FS

// Default returns the shipped policy files by file name.
func Default() (map[string][]byte, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(names))
	for _, n := range names {
		if out[n], err = files.ReadFile(n); err != nil {
			return nil, err
		}
	}
	return out, nil
}
