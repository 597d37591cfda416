// Package scheme is the runtime.Scheme of every kind the operator and its
// tests read and write: the built-in kinds, the Skyhook kinds, NodeWright's
// kinds and Flux's source kinds (the sources of PackageSets).
package scheme

import (
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// New returns a scheme with the built-in, the Skyhook, the NodeWright and
// the Flux source kinds.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err) // only a programming error: the kinds are known at build time
	}
	if err := skyhookv1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := nodewrightv1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := sourcev1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}
