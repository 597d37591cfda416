package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// skyhook --version prints the version as NodeWright's plugin does;
// version --timeout bounds the wait for a cluster that does not answer.
func TestVersionFlags(t *testing.T) {
	out, err := run(t, "--version")
	if err != nil || out != "Skyhook plugin: "+clientVersion()+"\n" {
		t.Errorf("--version: %v, %q", err, out)
	}
	// A server that accepts connections and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = conn.Close() })
		}
	}()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://"+l.Addr().String()+"', insecure-skip-tls-verify: true}}]\n"+
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: x}}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err = run(t, "version", "--timeout", "1s", "--kubeconfig", kubeconfig)
	if err != nil || !strings.Contains(out, "operator: unknown") || time.Since(start) > 8*time.Second {
		t.Errorf("version --timeout 1s against an unreachable server: %v after %s\n%s", err, time.Since(start), out)
	}
}
