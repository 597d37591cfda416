package leastprivilege

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/config/helm"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// The metrics are served over HTTPS only to a caller the apiserver
// authenticates and authorizes for GET /metrics: Prometheus's account,
// bound to the chart's metrics-reader role, reads them; an account without
// the role is refused (403) and a caller without a token is not
// authenticated (401). The operator checks with its own, restricted,
// account.
func TestMetricsNeedAnAuthorizedToken(t *testing.T) {
	for want, token := range map[int]string{
		http.StatusUnauthorized: "",
		http.StatusForbidden:    tokenOf(t, "stranger"),
	} {
		if code, _ := scrape(t, token); code != want {
			t.Errorf("token %.10q: HTTP %d, want %d", token, code, want)
		}
	}
	prometheus := tokenOf(t, "prometheus")
	testenv.Eventually(t, "Prometheus's account to read the operator's metrics", 30*time.Second, func() bool {
		code, body := scrape(t, prometheus)
		return code == http.StatusOK && strings.Contains(body, "controller_runtime_reconcile_total")
	})
	if denied := forbidden.all(); len(denied) > 0 {
		t.Errorf("the apiserver forbade the operator's account:\n%s", strings.Join(denied, "\n"))
	}
}

// tokenOf is a token of a ServiceAccount (made if missing) in the
// operator's namespace.
func tokenOf(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	accounts := env.Clientset.CoreV1().ServiceAccounts(helm.Default.Namespace)
	if _, err := accounts.Get(ctx, name, metav1.GetOptions{}); err != nil {
		if _, err := accounts.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expiry := int64(600)
	tr, err := accounts.CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// scrape GETs the metrics with a bearer token (none when empty).
func scrape(t *testing.T, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, metricsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	// The operator's metrics certificate is self-signed, as in a cluster
	// where Prometheus skips its verification (the chart's ServiceMonitor).
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// Started as NodeWright's chart starts it with PUBLISH_LEGACY_METRICS=false
// (DropLegacyMetrics, main_test.go), the operator serves NodeWright's
// gauges under their nodewright_* names only: a rollout's series are there,
// labelled nodewright_name, and no deprecated skyhook_* twin labelled
// skyhook_name is.
func TestLegacyMetricNamesCanBeDropped(t *testing.T) {
	ctx := context.Background()
	c := testenv.Client(t, env)
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "metric-names"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/hostname": "lp-3"}},
			Packages: skyhookv1.Packages{"tuning": {PackageRef: skyhookv1.PackageRef{Name: "tuning", Version: "1.0.0"},
				Image: "ghcr.io/example/tuning"}},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // gone before the next test rolls out on every node
		_ = c.Delete(ctx, sk)
		testenv.Eventually(t, "the Skyhook metric-names to be gone", time.Minute, func() bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(sk), &skyhookv1.Skyhook{}))
		})
	})
	prometheus := tokenOf(t, "prometheus")
	var body string
	testenv.Eventually(t, "the rollout's nodewright_* series", time.Minute, func() bool {
		var code int
		code, body = scrape(t, prometheus)
		return code == http.StatusOK && strings.Contains(body, `nodewright_node_target_count{nodewright_name="metric-names"} 1`)
	})
	if strings.Contains(body, "skyhook_name=") {
		for _, line := range strings.Split(body, "\n") {
			if strings.Contains(line, "skyhook_name=") {
				t.Errorf("a deprecated series is served: %s", line)
			}
		}
	}
}
