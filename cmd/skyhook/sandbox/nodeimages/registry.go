package nodeimages

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// RegistryOptions configure StartRegistry.
type RegistryOptions struct {
	// Listener is where the registry serves; a new listener on
	// 127.0.0.1:0 when nil. A caller makes its own to serve somewhere
	// else, such as the loopback of the node's network namespace; the
	// registry closes it.
	Listener net.Listener
	// Username and Password, when set, are required of every request (HTTP
	// basic auth), so that a test can exercise the stage pods'
	// imagePullSecrets: a request without them gets 401 and a Basic
	// challenge, which containerd answers with the pod's credentials.
	Username, Password string
	// Log receives the registry's log of requests; nil discards it.
	Log io.Writer
}

// Registry is an OCI registry held in memory (go-containerregistry's),
// served over plain HTTP, which containerd and go-containerregistry both
// use for a registry on 127.0.0.1 without being told.
type Registry struct {
	listener net.Listener
	pipe     *pipeListener
	server   *http.Server
	served   sync.WaitGroup
	opts     RegistryOptions
	// transport connects to the server through pipe, for Push.
	transport *http.Transport
}

// StartRegistry serves a new, empty registry until Close.
func StartRegistry(opts RegistryOptions) (*Registry, error) {
	if (opts.Username == "") != (opts.Password == "") {
		return nil, fmt.Errorf("the registry needs both a username and a password, or neither")
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	l := opts.Listener
	if l == nil {
		var err error
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, err
		}
	}
	var h http.Handler = ggcrregistry.New(ggcrregistry.Logger(log.New(opts.Log, "registry: ", 0)))
	if opts.Username != "" {
		h = basicAuth(h, opts.Username, opts.Password)
	}
	r := &Registry{listener: l, pipe: newPipeListener(), server: &http.Server{Handler: h}, opts: opts}
	r.transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return r.pipe.dial(ctx)
	}}
	for _, l := range []net.Listener{l, r.pipe} {
		r.served.Go(func() { _ = r.server.Serve(l) }) // returns ErrServerClosed on Close
	}
	return r, nil
}

// Realm is the realm of the registry's basic auth challenge.
const Realm = "skyhook"

// basicAuth lets through the requests with the username and password, and
// answers the others with 401 and a challenge.
func basicAuth(next http.Handler, username, password string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u, p, ok := req.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(username)) != 1 ||
			subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="`+Realm+`"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, req)
	})
}

// Host is the registry's address, as in "127.0.0.1:PORT", the first part of
// its image references.
func (r *Registry) Host() string {
	return r.listener.Addr().String()
}

// Push pushes the image as host/repoAndTag ("demo/tuning:1.0.0") and
// returns its reference by digest (host/repo@sha256:...), with which a test
// pins a stage pod to the image it made. It goes through an in-process
// connection to the same server, with the credentials when the registry
// has them, so it works whichever network namespace the listener is in.
func (r *Registry) Push(ctx context.Context, repoAndTag string, img v1.Image) (string, error) {
	ref, err := r.ref(repoAndTag)
	if err != nil {
		return "", err
	}
	if err := remote.Write(ref, img, r.remoteOptions(ctx)...); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return ref.Context().Digest(d.String()).String(), nil
}

// PushIndex is Push for an image index (an image for several platforms,
// as `make images` builds them).
func (r *Registry) PushIndex(ctx context.Context, repoAndTag string, idx v1.ImageIndex) (string, error) {
	ref, err := r.ref(repoAndTag)
	if err != nil {
		return "", err
	}
	if err := remote.WriteIndex(ref, idx, r.remoteOptions(ctx)...); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	return ref.Context().Digest(d.String()).String(), nil
}

func (r *Registry) ref(repoAndTag string) (name.Reference, error) {
	ref, err := name.ParseReference(r.Host()+"/"+repoAndTag, name.Insecure, name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("%q is not a repository with a tag: %w", repoAndTag, err)
	}
	return ref, nil
}

// RemoteOptions reach the registry over the in-process connection, with
// the credentials: a test signs or rewrites what it pushed with them.
func (r *Registry) RemoteOptions(ctx context.Context) []remote.Option {
	return r.remoteOptions(ctx)
}

// remoteOptions push over the in-process connection, with the credentials.
func (r *Registry) remoteOptions(ctx context.Context) []remote.Option {
	auth := authn.Anonymous
	if r.opts.Username != "" {
		auth = &authn.Basic{Username: r.opts.Username, Password: r.opts.Password}
	}
	return []remote.Option{remote.WithContext(ctx), remote.WithAuth(auth), remote.WithTransport(r.transport)}
}

// Close stops serving, closes the listener and forgets the images.
func (r *Registry) Close() error {
	r.transport.CloseIdleConnections()
	err := r.server.Close()
	r.served.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
