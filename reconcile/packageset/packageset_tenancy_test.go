package packageset_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/packageset"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// A PackageSet naming a ServiceAccount applies as that account: without
// RBAC on Skyhooks the dry run is forbidden, the set says so (naming the
// account) and nothing is applied; once a ClusterRole on Skyhooks and
// DeploymentPolicies is bound to the account, the same revision is applied.
// Deleted after its account, the set goes without pruning, leaving its
// objects.
func TestPackageSetAppliesAsItsServiceAccount(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	tenant(t, c, "tenant-a", "deployer")
	src := newSource(t, "tenant-a", "tenant-repo")
	src.publish("main@sha1:1111", map[string]string{
		"sets/skyhook.yaml": skyhookUnderPolicy("ps-tenant", "ps-tenant-policy", "1.0.0"),
		"sets/policy.yaml":  strings.Replace(policyManifest, "ps-policy", "ps-tenant-policy", 1),
	})
	ps := &skyhookv1.PackageSet{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: "tenant-a"},
		Spec: skyhookv1.PackageSetSpec{
			SourceRef: skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "tenant-repo"},
			Path:      "sets", Interval: metav1.Duration{Duration: time.Hour}, RetryInterval: &metav1.Duration{Duration: time.Second},
			Prune: true, ServiceAccountName: "deployer",
		},
	}
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "ps-tenant"}})
		_ = c.Delete(context.Background(), &skyhookv1.DeploymentPolicy{ObjectMeta: metav1.ObjectMeta{Name: "ps-tenant-policy"}})
	})
	key := client.ObjectKeyFromObject(ps)
	user := packageset.ServiceAccountUser("tenant-a", "deployer")

	got := waitStatus(t, c, key, func(p *skyhookv1.PackageSet) bool {
		return conditions.GetReason(p, meta.ReadyCondition) == packageset.ApplyFailedReason
	})
	msg := conditions.GetMessage(got, meta.ReadyCondition)
	for _, want := range []string{"revision main@sha1:1111 was not applied", "forbidden", `User "` + user + `"`, "skyhooks", "deploymentpolicies"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Ready says %q; want %q in it", msg, want)
		}
	}
	if conditions.IsReady(got) || conditions.IsStalled(got) {
		t.Errorf("conditions %+v; want not Ready and not Stalled (granting the account fixes it)", got.Status.Conditions)
	}
	testenv.WaitWarning(t, env, "tenant", packageset.ApplyFailedReason, user)
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-tenant"}, &skyhookv1.Skyhook{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Skyhook exists although its account may not write one: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-tenant-policy"}, &skyhookv1.DeploymentPolicy{}); !apierrors.IsNotFound(err) {
		t.Errorf("the DeploymentPolicy exists although its account may not write one: %v", err)
	}

	grantSkyhooks(t, c, "tenant-a", "deployer")
	waitPackageSet(t, key, func(p *skyhookv1.PackageSet) bool {
		return conditions.IsReady(p) && p.Status.LastAppliedRevision == "main@sha1:1111"
	})
	sk := &skyhookv1.Skyhook{}
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-tenant"}, sk); err != nil || sk.Spec.DeploymentPolicy != "ps-tenant-policy" {
		t.Fatalf("the Skyhook: %v %+v", err, sk.Spec)
	}
	if managers := fieldManagers(sk); !managers[packageset.FieldOwner] {
		t.Errorf("the Skyhook's field managers are %v; want %s", managers, packageset.FieldOwner)
	}

	// The account goes first: the set cannot prune as it, so it goes
	// without pruning (rather than staying, with its namespace) and says
	// what it left.
	if err := c.Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: "tenant-a"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, ps); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the PackageSet to go", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, key, &skyhookv1.PackageSet{}))
	})
	testenv.WaitWarning(t, env, "tenant", "PruneSkipped", "_ps-tenant_skyhook.nvidia.com_Skyhook")
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-tenant"}, &skyhookv1.Skyhook{}); err != nil {
		t.Errorf("the Skyhook was pruned without its account: %v", err)
	}
}

// tenant makes the namespace and its ServiceAccount.
func tenant(t testing.TB, c client.Client, namespace, account string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: account, Namespace: namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// grantSkyhooks binds the ServiceAccount to a ClusterRole with what a
// PackageSet needs on Skyhooks and DeploymentPolicies (docs/gitops.md):
// get (policy lookups, wait), create and patch (server-side apply), delete
// (prune).
func grantSkyhooks(t testing.TB, c client.Client, namespace, account string) {
	t.Helper()
	ctx := context.Background()
	name := "packageset-" + namespace + "-" + account
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{skyhookv1.GroupVersion.Group},
			Resources: []string{"skyhooks", "deploymentpolicies"},
			Verbs:     []string{"get", "create", "patch", "delete"},
		}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: account, Namespace: namespace}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), o) })
	}
}

// waitStatus waits for the PackageSet's status to satisfy cond, whether or
// not the generation is observed (a retried failure does not observe it).
func waitStatus(t *testing.T, c client.Client, key client.ObjectKey, cond func(*skyhookv1.PackageSet) bool) *skyhookv1.PackageSet {
	t.Helper()
	ps := &skyhookv1.PackageSet{}
	eventually(t, "the PackageSet "+key.Name, func() bool {
		return c.Get(context.Background(), key, ps) == nil && cond(ps)
	})
	return ps
}

// fieldManagers are the managers of an object's fields.
func fieldManagers(o client.Object) map[string]bool {
	out := map[string]bool{}
	for _, m := range o.GetManagedFields() {
		out[m.Manager] = true
	}
	return out
}
