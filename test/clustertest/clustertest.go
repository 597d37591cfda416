// Package clustertest starts one local control plane (package cluster) for
// a test package, from its TestMain, and stops it when the tests end.
package clustertest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
)

// Main starts one cluster for a test package, points *into at it, runs the
// setup functions (which may start goroutines that live until the tests end,
// with the context they get), runs the package's tests and stops the
// cluster; use it from TestMain:
//
//	var env *cluster.Cluster
//
//	func TestMain(m *testing.M) { os.Exit(clustertest.Main(m, cluster.Options{...}, &env)) }
//
// An interrupt or termination signal stops the cluster before the process
// exits. Set SKYHOOK_TEST_LOG=1 to see the start-up progress.
//
// A fuzzing run of the package starts no cluster (*into stays nil) in its
// fuzz workers, which run the fuzz target alone, nor in the coordinator
// when -run is '^$' (as `make fuzz` and the benchmarks run it): the
// package's fuzz targets and benchmarks must not need the cluster.
func Main(m *testing.M, opts cluster.Options, into **cluster.Cluster, setup ...func(context.Context, *cluster.Cluster) error) int {
	if noClusterNeeded() {
		return m.Run()
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if opts.Log == nil && os.Getenv("SKYHOOK_TEST_LOG") != "" {
		opts.Log = os.Stderr
	}
	start := time.Now()
	c, err := cluster.Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the local cluster: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "local cluster up in %s (%s)\n", time.Since(start).Round(time.Millisecond), c.Dir)
	*into = c
	for _, s := range setup {
		if err := s(ctx, c); err != nil {
			fmt.Fprintf(os.Stderr, "setting up the local cluster: %v\n", err)
			c.Stop()
			return 1
		}
	}

	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "interrupted: stopping the local cluster")
			c.Stop()
			os.Exit(130)
		case <-finished:
		}
	}()
	code := m.Run()
	close(finished)
	c.Stop()
	return code
}

// noClusterNeeded reports whether this test process runs no test: a fuzz
// worker, or a fuzzing coordinator or a benchmark run told to run none
// (-run '^$'). Fuzz targets and benchmarks must not need the cluster.
func noClusterNeeded() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	value := func(name string) string {
		if f := flag.Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	noTests := value("test.run") == "^$"
	return value("test.fuzzworker") == "true" || (value("test.fuzz") != "" && noTests) || (value("test.bench") != "" && noTests)
}
