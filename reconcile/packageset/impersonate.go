package packageset

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Multi-tenancy: a PackageSet's objects are applied, pruned and read as its
// ServiceAccount (spec.serviceAccountName, else the operator's default), so
// a set can do no more than that account's RBAC allows. Only the set
// itself, its status and its source are the operator's.

// ServiceAccountUser is the user name the API server gives a ServiceAccount.
func ServiceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// Impersonator makes the clients that act as ServiceAccounts: each a copy
// of the operator's rest.Config impersonating the account (the API server
// adds the account's groups), made once per account and kept. The operator
// needs the impersonate verb on serviceaccounts.
type Impersonator struct {
	config  *rest.Config
	options client.Options

	mu      sync.Mutex
	clients map[string]client.Client
}

// NewImpersonator makes clients from cfg (the operator's), with the
// operator's scheme and REST mapper.
func NewImpersonator(cfg *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper) *Impersonator {
	return &Impersonator{config: cfg, options: client.Options{Scheme: scheme, Mapper: mapper}, clients: map[string]client.Client{}}
}

// For is the client acting as ServiceAccount namespace/name. It reads
// straight from the API server: nothing is cached as the account.
func (i *Impersonator) For(namespace, name string) (client.Client, error) {
	user := ServiceAccountUser(namespace, name)
	i.mu.Lock()
	defer i.mu.Unlock()
	if c, ok := i.clients[user]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(i.config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, i.options)
	if err != nil {
		return nil, fmt.Errorf("a client impersonating %s: %w", user, err)
	}
	i.clients[user] = c
	return c, nil
}

// serviceAccount is the ServiceAccount, in the set's namespace, that the
// set acts as; empty: the operator itself.
func (r *Reconciler) serviceAccount(ps *skyhookv1.PackageSet) string {
	if ps.Spec.ServiceAccountName != "" {
		return ps.Spec.ServiceAccountName
	}
	return r.DefaultServiceAccount
}

// applier is the client that applies, prunes and reads the set's objects.
func (r *Reconciler) applier(ps *skyhookv1.PackageSet) (client.Client, error) {
	sa := r.serviceAccount(ps)
	if sa == "" {
		return r.Client, nil
	}
	if r.Impersonator == nil {
		return nil, fmt.Errorf("ServiceAccount %s/%s: this operator cannot impersonate", ps.Namespace, sa)
	}
	return r.Impersonator.For(ps.Namespace, sa)
}

// accountGone names the set's ServiceAccount when it no longer exists, or
// is empty (also when the set has none, or the answer is unknown).
func (r *Reconciler) accountGone(ctx context.Context, ps *skyhookv1.PackageSet) string {
	sa := r.serviceAccount(ps)
	if sa == "" || r.APIReader == nil {
		return ""
	}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: ps.Namespace, Name: sa}, &corev1.ServiceAccount{})
	if apierrors.IsNotFound(err) {
		return "ServiceAccount " + ps.Namespace + "/" + sa
	}
	return ""
}
