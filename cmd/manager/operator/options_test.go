package operator

import "testing"

func TestWebhookAddress(t *testing.T) {
	for _, tc := range []struct {
		host     string
		port     int
		address  string
		hostname string
	}{
		{"localhost", 9443, "localhost:9443", "localhost"},
		{"localhost:7000", 9443, "localhost:7000", "localhost"},
		{"127.0.0.1:7000", 9443, "127.0.0.1:7000", "127.0.0.1"},
	} {
		o := Options{LocalWebhookHost: tc.host, WebhookPort: tc.port}
		if got := o.WebhookAddress(); got != tc.address {
			t.Errorf("%s, port %d: WebhookAddress = %q, want %q", tc.host, tc.port, got, tc.address)
		}
		if got := o.localWebhookHostname(); got != tc.hostname {
			t.Errorf("%s: the certificate's name = %q, want %q", tc.host, got, tc.hostname)
		}
	}
}
