package operator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/skyhook-go/skyhook/config"
)

const fieldOwner = "skyhook-operator"

func webhookInfo() []rotator.WebhookInfo {
	return []rotator.WebhookInfo{
		{Name: config.MutatingWebhookName, Type: rotator.Mutating},
		{Name: config.ValidatingWebhookName, Type: rotator.Validating},
	}
}

// installWebhookConfigurations creates the certificate Secret if missing, and
// creates or updates the operator's webhook configurations so they point at
// this operator, keeping the CA bundles the rotator injected before (a
// restart must not break admission).
func installWebhookConfigurations(ctx context.Context, mgr manager.Manager, opts Options) error {
	// The manager's cache is not running yet.
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	// The rotator fills this Secret but does not create it.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: opts.Namespace, Name: CertSecretName}}
	if err := c.Create(ctx, secret, client.FieldOwner(fieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the certificate Secret: %w", err)
	}
	mutating, validating, err := config.Webhooks(func(path string) admissionregistrationv1.WebhookClientConfig {
		if opts.LocalWebhookHost != "" {
			url := "https://" + opts.WebhookAddress() + path
			return admissionregistrationv1.WebhookClientConfig{URL: &url}
		}
		port := int32(opts.WebhookPort)
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: opts.Namespace, Name: opts.ServiceName, Path: &path, Port: &port,
		}}
	})
	if err != nil {
		return err
	}

	oldM := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := upsert(ctx, c, mutating, oldM, func() {
		carryCABundles(oldM.Webhooks, mutating.Webhooks, func(w *admissionregistrationv1.MutatingWebhook) (string, *[]byte) {
			return w.Name, &w.ClientConfig.CABundle
		})
	}); err != nil {
		return err
	}
	oldV := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	return upsert(ctx, c, validating, oldV, func() {
		carryCABundles(oldV.Webhooks, validating.Webhooks, func(w *admissionregistrationv1.ValidatingWebhook) (string, *[]byte) {
			return w.Name, &w.ClientConfig.CABundle
		})
	})
}

// carryCABundles copies each webhook's CA bundle from the existing
// configuration to the desired one, matched by webhook name; a webhook
// renamed by an upgrade gets the bundle of any existing one (the rotator
// signs them all with one CA).
func carryCABundles[W any](existing, desired []W, bundle func(*W) (string, *[]byte)) {
	bundles := map[string][]byte{}
	var anyBundle []byte
	for i := range existing {
		name, b := bundle(&existing[i])
		bundles[name] = *b
		if len(*b) > 0 {
			anyBundle = *b
		}
	}
	for i := range desired {
		name, b := bundle(&desired[i])
		if *b = bundles[name]; len(*b) == 0 {
			*b = anyBundle
		}
	}
}

// upsert creates desired, or reads the existing object into existing, lets
// carryOver copy what must survive, and updates it.
func upsert(ctx context.Context, c client.Client, desired, existing client.Object, carryOver func()) error {
	err := c.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		return c.Create(ctx, desired, client.FieldOwner(fieldOwner))
	}
	if err != nil {
		return err
	}
	carryOver()
	desired.SetResourceVersion(existing.GetResourceVersion())
	if err := c.Update(ctx, desired, client.FieldOwner(fieldOwner)); err != nil {
		return fmt.Errorf("updating %s: %w", desired.GetName(), err)
	}
	return nil
}

// certFileWriter writes the certificate Secret's serving pair into the cert
// directory, as the kubelet does for a Secret volume in a cluster, for an
// operator that runs outside one. Like the kubelet's volume it serves
// every replica, the leader or not.
type certFileWriter struct {
	client client.Client
	key    types.NamespacedName
	dir    string
}

func (w *certFileWriter) setup(mgr manager.Manager) error {
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == w.key.Namespace && o.GetName() == w.key.Name
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("webhook-cert-files").
		For(&corev1.Secret{}, builder.WithPredicates(ours)).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		Complete(w)
}

// Reconcile writes tls.crt and tls.key when the Secret holds them.
func (w *certFileWriter) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	var secret corev1.Secret
	if err := w.client.Get(ctx, w.key, &secret); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if len(secret.Data["tls.crt"]) == 0 || len(secret.Data["tls.key"]) == 0 {
		return ctrl.Result{}, nil // the rotator has not filled it yet
	}
	if err := os.MkdirAll(w.dir, 0o700); err != nil {
		return ctrl.Result{}, err
	}
	// Key first: the webhook server reloads when the certificate changes.
	for _, name := range []string{"tls.key", "tls.crt"} {
		if err := writeAtomically(filepath.Join(w.dir, name), secret.Data[name]); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

func writeAtomically(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
