package nodeimages

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

func startRegistry(t *testing.T, opts RegistryOptions) *Registry {
	t.Helper()
	r, err := StartRegistry(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("closing the registry: %v", err)
		}
	})
	return r
}

// A registry with credentials takes pushes with them, refuses a pull
// without them with 401 and a Basic challenge, and serves the images with
// them, over its loopback listener.
func TestRegistryWithBasicAuth(t *testing.T) {
	bb := testBusybox(t)
	r := startRegistry(t, RegistryOptions{Username: "puller", Password: "s3cret"})
	if !strings.HasPrefix(r.Host(), "127.0.0.1:") {
		t.Errorf("host %s, want one on 127.0.0.1", r.Host())
	}
	spec := testPackage(t, "1.0.0")
	pkg, err := Package(spec)
	if err != nil {
		t.Fatal(err)
	}
	pause, err := Pause(bb)
	if err != nil {
		t.Fatal(err)
	}
	pkgRef, err := r.Push(t.Context(), "demo/tuning:1.0.0", pkg)
	if err != nil {
		t.Fatal(err)
	}
	if want := r.Host() + "/demo/tuning@" + digest(t, pkg).String(); pkgRef != want {
		t.Errorf("Push returned %s, want %s", pkgRef, want)
	}
	pauseRef, err := r.Push(t.Context(), "pause:1", pause)
	if err != nil {
		t.Fatal(err)
	}

	// Without credentials: 401 with the challenge containerd answers.
	resp, err := http.Get("http://" + r.Host() + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || got != `Basic realm="skyhook"` {
		t.Errorf("GET /v2/ without credentials: %s, WWW-Authenticate %q; want 401 and a Basic challenge", resp.Status, got)
	}
	for _, ref := range []string{pkgRef, r.Host() + "/pause:1"} {
		_, err := remote.Image(mustRef(t, ref), remote.WithContext(t.Context()))
		var terr *transport.Error
		if !errors.As(err, &terr) || terr.StatusCode != http.StatusUnauthorized {
			t.Errorf("pulling %s without credentials: %v, want a 401", ref, err)
		}
	}
	// Wrong ones are no better.
	_, err = remote.Image(mustRef(t, pkgRef), remote.WithContext(t.Context()),
		remote.WithAuth(&authn.Basic{Username: "puller", Password: "guess"}))
	if err == nil {
		t.Error("pulled with a wrong password")
	}

	// With credentials: the images as pushed.
	auth := remote.WithAuth(&authn.Basic{Username: "puller", Password: "s3cret"})
	pulled, err := remote.Image(mustRef(t, pkgRef), remote.WithContext(t.Context()), auth)
	if err != nil {
		t.Fatal(err)
	}
	if digest(t, pulled) != digest(t, pkg) {
		t.Errorf("pulled %s, pushed %s", digest(t, pulled), digest(t, pkg))
	}
	headers, contents := files(t, pulled)
	if got := contents["skyhook-package/config.json"]; !bytes.Equal(got, spec.Config) {
		t.Errorf("pulled config.json:\n%s\nwant:\n%s", got, spec.Config)
	}
	if sh := headers["bin/sh"]; sh == nil || sh.Linkname != "busybox" {
		t.Errorf("pulled bin/sh: %+v, want a link to busybox", sh)
	}
	pulledPause, err := remote.Image(mustRef(t, pauseRef), remote.WithContext(t.Context()), auth)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pulledPause.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Config.Entrypoint) == 0 || cfg.Config.Entrypoint[0] != "/bin/sh" {
		t.Errorf("pulled pause entrypoint %v", cfg.Config.Entrypoint)
	}
}

// Without credentials the registry is open; it serves on the listener it
// is given, and pushes indexes.
func TestRegistryOnAGivenListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := startRegistry(t, RegistryOptions{Listener: l})
	if r.Host() != l.Addr().String() {
		t.Errorf("host %s, want the listener's %s", r.Host(), l.Addr())
	}
	pause, err := Pause(testBusybox(t))
	if err != nil {
		t.Fatal(err)
	}
	idx := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: pause,
		Descriptor: v1.Descriptor{Platform: new(Platform())}})
	ref, err := r.PushIndex(t.Context(), "pause:multi", idx)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Index(mustRef(t, r.Host()+"/pause:multi"), remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	d, err := pulled.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if want := r.Host() + "/pause@" + d.String(); ref != want {
		t.Errorf("PushIndex returned %s, want %s", ref, want)
	}
}

func TestStartRegistryWantsBothCredentials(t *testing.T) {
	if r, err := StartRegistry(RegistryOptions{Username: "puller"}); err == nil {
		r.Close()
		t.Error("a username without a password was accepted")
	}
}

// The Secret's content carries the credentials the registry wants.
func TestDockerConfigJSON(t *testing.T) {
	r := startRegistry(t, RegistryOptions{Username: "puller", Password: "s3cret"})
	var cfg struct {
		Auths map[string]struct{ Username, Password, Auth string }
	}
	if err := json.Unmarshal(DockerConfigJSON(r.Host(), "puller", "s3cret"), &cfg); err != nil {
		t.Fatal(err)
	}
	entry, ok := cfg.Auths[r.Host()]
	if !ok || entry.Username != "puller" || entry.Password != "s3cret" {
		t.Fatalf("auths: %+v, want puller's credentials for %s", cfg.Auths, r.Host())
	}
	req, err := http.NewRequest("GET", "http://"+r.Host()+"/v2/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Basic "+entry.Auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v2/ with the config's auth: %s, want 200", resp.Status)
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}
