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

// Two operators started one after the other in one process may get the
// same free webhook port; their rotators still need two names.
func TestEachInProcessStartNamesItsRotatorAnew(t *testing.T) {
	opts := Options{inProcess: true, WebhookPort: 40723}
	if a, b := rotatorName(opts), rotatorName(opts); a == b {
		t.Errorf("two starts on port %d both named their rotator %q", opts.WebhookPort, a)
	}
	if got := rotatorName(Options{WebhookPort: 40723}); got != "cert-rotator" {
		t.Errorf("the operator's own process: %q, want cert-rotator", got)
	}
}
