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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
