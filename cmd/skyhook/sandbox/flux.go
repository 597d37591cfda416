package sandbox

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/gitserver"
)

// fluxFile, in the state directory, says where the Git server and the OCI
// registry listen.
const fluxFile = "flux.txt"

// startFlux runs source-controller, a Git server with an empty repository
// "fleet", and an OCI registry, all on loopback, and writes their addresses
// to flux.txt.
func startFlux(ctx context.Context, c *cluster.Cluster, sc *binaries.Controller, opts Options) (func(), error) {
	fmt.Fprintln(opts.Out, "starting Flux's source-controller, a Git server and an OCI registry")
	if err := c.StartSourceController(ctx, sc); err != nil {
		return nil, err
	}
	gitRoot := opts.path("git")
	if err := os.MkdirAll(gitRoot, 0o755); err != nil {
		return nil, err
	}
	git, err := gitserver.Start(gitRoot)
	if err != nil {
		return nil, err
	}
	repo := git.URL + "/fleet.git"
	if _, err := os.Stat(opts.path("git/fleet.git")); err != nil {
		if repo, err = git.Create("fleet"); err != nil {
			_ = git.Close()
			return nil, err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = git.Close()
		return nil, err
	}
	reg := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	go func() { _ = reg.Serve(l) }()
	info := fmt.Sprintf("git repository: %s\noci registry: oci://%s (plain HTTP: --insecure, OCIRepository spec.insecure: true)\n", repo, l.Addr())
	if err := os.WriteFile(opts.path(fluxFile), []byte(info), 0o644); err != nil {
		return nil, err
	}
	fmt.Fprint(opts.Out, info)
	return func() { _ = git.Close(); _ = reg.Close() }, nil
}
