package main

import (
	"os"
	"testing"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/test/clustertest"
)

// env is a real API server with the Skyhook CRDs for the commands that
// talk to a cluster (no operator: the tests write the status they need).
var env *cluster.Cluster

func TestMain(m *testing.M) {
	crds, err := config.CRDs()
	if err != nil {
		panic(err)
	}
	os.Exit(clustertest.Main(m, cluster.Options{CRDs: crds}, &env))
}
