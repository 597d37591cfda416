// Package leastprivilege runs the operator as its own ServiceAccount, bound
// to exactly the roles the Helm chart ships (not as an admin), through a
// rollout with interrupts fed by a PackageSet from Git and through the
// chart's cleanup, and fails on any request the apiserver forbids.
package leastprivilege

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/gitserver"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config/helm"
	"github.com/skyhook-go/skyhook/test/clustertest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

var (
	env       *cluster.Cluster
	git       *gitserver.Server
	forbidden = &forbiddenLog{}
	// operatorConfig is the operator's identity: its ServiceAccount.
	operatorConfig *rest.Config
	// metricsURL is where the operator serves its metrics, securely.
	metricsURL string
)

func TestMain(m *testing.M) {
	sc, err := binaries.EnsureSourceController(context.Background(), binaries.Options{Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	crds, err := testenv.CRDsWithControllers(sc)
	if err != nil {
		panic(err)
	}
	gitRoot, err := os.MkdirTemp("", "skyhook-git-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(gitRoot)
	nodes := simnode.Numbered("lp", 4, map[string]string{"pool": "least-privilege"})
	os.Exit(clustertest.Main(m, cluster.Options{CRDs: crds, Nodes: nodes}, &env, func(ctx context.Context, c *cluster.Cluster) error {
		if err := c.StartSourceController(ctx, sc); err != nil {
			return err
		}
		if git, err = gitserver.Start(gitRoot); err != nil {
			return err
		}
		c.SimulateHosts(ctx, time.Second) // reboots for interrupt pods that ask for one
		if err := installShippedRBAC(c); err != nil {
			return err
		}
		operatorConfig = asServiceAccount(c.Config, helm.Default.Namespace, serviceAccount)
		if err := testenv.OperatorLogs(c); err != nil {
			return err
		}
		ports, err := proc.FreePorts(1)
		if err != nil {
			return err
		}
		metricsURL = fmt.Sprintf("https://127.0.0.1:%d/metrics", ports[0])
		// DropLegacyMetrics: as NodeWright's chart with PUBLISH_LEGACY_METRICS=false
		// (TestLegacyMetricNamesCanBeDropped).
		_, err = operator.StartLocal(ctx, operatorConfig, operator.Options{Namespace: helm.Default.Namespace,
			MetricsAddr: fmt.Sprintf("127.0.0.1:%d", ports[0]), MetricsSecure: true, DropLegacyMetrics: true})
		return err
	}))
}

// serviceAccount is the operator's account as the chart names it.
const serviceAccount = "skyhook-operator-controller-manager"

// installShippedRBAC applies the chart's namespace, ServiceAccount, roles
// and bindings (default values), as an admin would install them.
func installShippedRBAC(c *cluster.Cluster) error {
	ch, err := helm.Load()
	if err != nil {
		return err
	}
	rendered, err := helm.Render(ch, helm.Default, map[string]any{"namespace": map[string]any{"create": true},
		"metrics": map[string]any{"addServiceAccountBinding": true, "serviceAccountName": "prometheus", "serviceAccountNamespace": helm.Default.Namespace}})
	if err != nil {
		return err
	}
	var docs []string
	for _, m := range rendered.Manifests {
		switch m.Head.Kind {
		case "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			// with the metrics-reader role, bound to Prometheus's account as
			// metrics.addServiceAccountBinding does
			docs = append(docs, m.Content)
		}
	}
	f, err := os.CreateTemp("", "skyhook-rbac-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(strings.Join(docs, "\n---\n")); err != nil {
		return err
	}
	f.Close()
	_, err = c.Kubectl("apply", "--server-side", "-f", f.Name())
	return err
}

// asServiceAccount is the admin's config impersonating a ServiceAccount,
// with the groups the apiserver gives one, every answer recorded in
// forbidden when it is 403.
func asServiceAccount(admin *rest.Config, namespace, name string) *rest.Config {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return forbidden.wrap(rt) }
	return cfg
}

// forbiddenLog keeps every request the apiserver answered 403.
type forbiddenLog struct {
	mu       sync.Mutex
	requests map[string]int
}

func (f *forbiddenLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			f.mu.Lock()
			if f.requests == nil {
				f.requests = map[string]int{}
			}
			f.requests[req.Method+" "+req.URL.Path]++
			f.mu.Unlock()
		}
		return resp, err
	})
}

// all lists the forbidden requests with their counts.
func (f *forbiddenLog) all() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for r, n := range f.requests {
		out = append(out, fmt.Sprintf("%s (%d×)", r, n))
	}
	sort.Strings(out)
	return out
}

// forget drops what was recorded.
func (f *forbiddenLog) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = nil
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
