package binaries

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// PrometheusVersion is the github.com/prometheus/prometheus module of the
// Prometheus the tests scrape the operator with: its Go module versions
// v0.3XX.Y are the releases 3.XX.Y.
const PrometheusVersion = "v0.316.0"

// Prometheus is a built prometheus and promtool.
type Prometheus struct {
	// Version is the release, as `prometheus --version` says it (3.16.0).
	Version string
	// Server and Promtool are paths of the executables.
	Server, Promtool string
}

// EnsurePrometheus builds prometheus and promtool into the cache unless
// they are there (once per version: a few minutes cold on two cores), and
// returns their paths. Only the Kubernetes service discovery is linked in
// (the release builds' remove_all_sd tag), the one the tests use; the web
// UI's assets are not embedded (its API is all a test reads).
func EnsurePrometheus(ctx context.Context, opts Options) (*Prometheus, error) {
	if err := opts.withDefaults(); err != nil {
		return nil, err
	}
	r := prometheusRecipe(PrometheusVersion)
	dir, err := ensure(ctx, opts, r)
	if err != nil {
		return nil, fmt.Errorf("building prometheus %s: %w", r.version, err)
	}
	return &Prometheus{Version: releaseOf(PrometheusVersion), Server: filepath.Join(dir, "prometheus"), Promtool: filepath.Join(dir, "promtool")}, nil
}

func prometheusRecipe(version string) recipe {
	module := "github.com/prometheus/prometheus"
	return recipe{
		name:     "prometheus",
		version:  version,
		module:   module,
		packages: []string{module + "/cmd/prometheus", module + "/cmd/promtool"},
		tags:     "remove_all_sd,enable_kubernetes_sd",
		ldflags:  "-X github.com/prometheus/common/version.Version=" + releaseOf(version),
		assign:   func(*Set, string) {},
	}
}

// releaseOf is the Prometheus release of a module version: v0.316.0 is
// 3.16.0.
func releaseOf(moduleVersion string) string {
	parts := strings.SplitN(strings.TrimPrefix(moduleVersion, "v0."), ".", 2)
	if len(parts) != 2 || len(parts[0]) != 3 {
		return moduleVersion
	}
	minor, err := strconv.Atoi(parts[0][1:])
	if err != nil {
		return moduleVersion
	}
	return fmt.Sprintf("%c.%d.%s", parts[0][0], minor, parts[1])
}
