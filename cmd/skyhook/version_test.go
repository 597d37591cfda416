package main

import (
	"strings"
	"testing"
)

// version --client-only (NodeWright's spelling) and --client print the
// client's version alone, without looking for a cluster.
func TestVersionClientOnly(t *testing.T) {
	for _, flag := range []string{"--client-only", "--client"} {
		out, err := run(t, "version", flag, "--kubeconfig", "/nonexistent/kubeconfig")
		if err != nil || !strings.HasPrefix(out, "client: ") || strings.Contains(out, "operator") {
			t.Errorf("version %s: %v\n%s", flag, err, out)
		}
	}
}
