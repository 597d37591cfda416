package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
)

const goodSkyhook = `apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: gpu}
spec:
  packages:
    tuning: {version: 1.2.0, image: ghcr.io/x/tuning}
`

// run runs the CLI with nothing on its input (as a script without a
// terminal), its output and errors in one string.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runWithInput(t, "", args...)
}

// runWithInput runs the CLI with input as what the user types.
func runWithInput(t *testing.T, input string, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetIn(strings.NewReader(input))
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// push writes a Flux OCI artifact (Flux's media types) to a registry, pull
// gets the same files back; a set with an invalid manifest is not pushed.
func TestPushAndPull(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gpu.yaml"), []byte(goodSkyhook), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "oci://" + host + "/fleet/gpu:v1"
	if out, err := run(t, "push", dir, url, "--insecure", "--source", "https://git.example/fleet", "--revision", "main@sha1:abc"); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	raw, err := crane.Manifest(host+"/fleet/gpu:v1", crane.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		MediaType string
		Config    struct{ MediaType string }
		Layers    []struct{ MediaType string }
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	if manifest.Config.MediaType != "application/vnd.cncf.flux.config.v1+json" || len(manifest.Layers) != 1 ||
		manifest.Layers[0].MediaType != "application/vnd.cncf.flux.content.v1.tar+gzip" {
		t.Errorf("manifest %s; want Flux's config and one content layer", raw)
	}

	out := t.TempDir()
	meta, err := run(t, "pull", url, out, "--insecure")
	if err != nil {
		t.Fatalf("pull: %v\n%s", err, meta)
	}
	if !strings.Contains(meta, `"source_revision": "main@sha1:abc"`) || !strings.Contains(meta, `"source_url": "https://git.example/fleet"`) {
		t.Errorf("pulled metadata %s", meta)
	}
	if got, err := os.ReadFile(filepath.Join(out, "gpu.yaml")); err != nil || string(got) != goodSkyhook {
		t.Errorf("pulled %q, %v", got, err)
	}

	bad := t.TempDir()
	_ = os.WriteFile(filepath.Join(bad, "gpu.yaml"), []byte(strings.Replace(goodSkyhook, "1.2.0", "not-a-version", 1)), 0o644)
	_ = os.WriteFile(filepath.Join(bad, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644)
	msg, err := run(t, "push", bad, "oci://"+host+"/fleet/bad:v1", "--insecure")
	if err == nil || !strings.Contains(msg, "gpu.yaml: Skyhook/gpu: spec.packages.tuning.version") || !strings.Contains(msg, `cm.yaml: document 1: ConfigMap "x" (v1) is not allowed`) {
		t.Errorf("push of a broken set: %v\n%s", err, msg)
	}
	if tags, _ := crane.ListTags(host+"/fleet/bad", crane.Insecure); len(tags) != 0 {
		t.Errorf("a broken set was pushed: %v", tags)
	}
}
