// Package testenv holds what the integration tests share: a client for a
// cluster started by package cluster, and the location of the reference
// manifests in ../shared.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/cluster"
)

// Scheme knows the built-in kinds and the Skyhook kinds.
var Scheme = newScheme()

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := skyhookv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// Client returns a controller-runtime client for the cluster.
func Client(c *cluster.Cluster) (client.Client, error) {
	return client.New(c.Config, client.Options{Scheme: Scheme})
}

// SharedDirEnv overrides where the shared reference material is.
const SharedDirEnv = "SKYHOOK_SHARED_DIR"

// SharedDir is the shared/ directory beside the repository (or
// $SKYHOOK_SHARED_DIR): the reference manifests and package configs the
// project must accept unchanged.
func SharedDir() (string, error) {
	if dir := os.Getenv(SharedDirEnv); dir != "" {
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "..", "shared")
	if _, err := os.Stat(filepath.Join(dir, "testdata")); err != nil {
		return "", fmt.Errorf("the shared reference data is not beside the repository (%s); set %s: %w", dir, SharedDirEnv, err)
	}
	return dir, nil
}

// RepoRoot is the directory holding the project's go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
