package operator

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/scheme"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// DefaultNamespace is StartLocal's namespace when the options name none.
const DefaultNamespace = "skyhook-system"

// StartLocal runs the operator in this process against the cluster of cfg,
// as cfg's identity, in opts.Namespace (which must exist: EnsureNamespace),
// serving its webhooks on a free port of localhost, and returns once the
// apiserver routes admission through them. The operator stops when ctx
// ends; its error, if any, arrives on the returned channel. The sandbox and
// the tests use it.
func StartLocal(ctx context.Context, cfg *rest.Config, opts Options) (<-chan error, error) {
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.WebhookPort == 0 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		opts.WebhookPort = port
	}
	if opts.CertDir == "" {
		dir, err := os.MkdirTemp("", "skyhook-webhook-certs-")
		if err != nil {
			return nil, err
		}
		opts.CertDir = dir
	}
	opts.WebhookHost, opts.LocalWebhookHost, opts.Certs = "127.0.0.1", "localhost", CertsSelfManaged
	opts.inProcess = true
	if opts.MetricsAddr == "" {
		opts.MetricsAddr = "0"
	}
	if opts.ProbeAddr == "" {
		opts.ProbeAddr = "0"
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, err
	}
	mgr, err := New(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if err := WaitAdmission(ctx, c, done); err != nil {
		return nil, err
	}
	return done, nil
}

// WaitAdmission waits until a server-side dry run of an invalid Skyhook is
// refused by the operator's webhook: the certificate is served, its CA
// injected, and the apiserver calls it. done reports the operator stopping
// (nil when it runs elsewhere).
func WaitAdmission(ctx context.Context, c client.Client, done <-chan error) error {
	probe := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "admission-probe"},
		Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{"probe": {
			PackageRef: skyhookv1.PackageRef{Version: "not-a-version"}, Image: "example.com/probe",
		}}},
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			return false, fmt.Errorf("the operator stopped: %w", err)
		default:
		}
		last = c.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		return last != nil && strings.Contains(last.Error(), "validate-skyhook.nvidia.com"), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the webhooks to answer (last answer: %v): %w", last, err)
	}
	return nil
}

// EnsureNamespace creates the operator's namespace if it is missing, as an
// install would; StartLocal does not, since it runs the operator as cfg's
// identity, which may be the operator's own ServiceAccount.
func EnsureNamespace(ctx context.Context, cfg *rest.Config, name string) error {
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
