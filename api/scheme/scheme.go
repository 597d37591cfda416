// Package scheme is the runtime.Scheme of every kind the operator and its
// tests read and write: the built-in kinds and the Skyhook kinds.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// New returns a scheme with the built-in and the Skyhook kinds.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err) // only a programming error: the kinds are known at build time
	}
	if err := skyhookv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}
