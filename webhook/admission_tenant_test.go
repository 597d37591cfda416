package webhook_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	"github.com/skyhook-go/skyhook/api/scheme"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/policies"
	"github.com/skyhook-go/skyhook/webhook/policy"
)

// A tenant's ServiceAccount (as a PackageSet impersonates it) may write
// rollouts only for the nodes the admin's tenant-node-selectors policy
// gives it: through the apiserver, as that ServiceAccount, a Skyhook or a
// NodeWright selecting another pool is refused naming spec.nodeSelectors,
// one selecting its own pool is admitted.
func TestTenantMaySelectOnlyItsNodes(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	files, err := policies.Default()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(files["tenant-node-selectors.yaml"]), "      variable: []",
		"      variable:\n      - {serviceAccount: team-b/flux, nodeLabels: {pool: team-b}}", 1)
	text = strings.Replace(text, "validation-failure-action: Audit", "validation-failure-action: Enforce", 1)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tenants", Namespace: operatorNamespace, Labels: map[string]string{policy.Label: "true"}},
		Data: map[string]string{"tenants.yaml": text}}
	mustCreate(t, c, cm)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "tenant-rollouts"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"skyhook.nvidia.com"}, Resources: []string{"skyhooks"}, Verbs: []string{"create"}},
		{APIGroups: []string{"nodewright.nvidia.com"}, Resources: []string{"nodewrights"}, Verbs: []string{"create"}}}}
	mustCreate(t, c, role)
	mustCreate(t, c, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant-rollouts"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "team-b", Name: "flux"}}})

	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:team-b:flux",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:team-b", "system:authenticated"}}
	tenant, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	spec := func(pool string) skyhookv1.SkyhookSpec {
		return skyhookv1.SkyhookSpec{NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": pool}},
			Packages: skyhookv1.Packages{"tuning": {PackageRef: skyhookv1.PackageRef{Version: "1.0.0"}, Image: "ghcr.io/x/tuning"}}}
	}
	want := "spec.nodeSelectors.matchLabels reaches beyond the nodes this requester may disrupt"
	rule := "policy tenant-node-selectors, rule tenants-select-their-nodes"
	var err2 error
	deadline := time.Now().Add(15 * time.Second)
	for { // the ConfigMap's policy loads within a moment
		err2 = tenant.Create(ctx, &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "reach"}, Spec: spec("team-a")}, client.DryRunAll)
		if err2 != nil && strings.Contains(err2.Error(), rule) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err2 == nil || !strings.Contains(err2.Error(), want) || !strings.Contains(err2.Error(), rule) {
		t.Fatalf("a Skyhook on team-a's pool by team-b's ServiceAccount: %v; want refused, naming spec.nodeSelectors.matchLabels and the rule", err2)
	}
	err = tenant.Create(ctx, &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "everywhere"}, Spec: skyhookv1.SkyhookSpec{Packages: spec("team-b").Packages}}, client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a Skyhook without nodeSelectors (every node) by team-b's ServiceAccount: %v; want refused", err)
	}
	err = tenant.Create(ctx, &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: "reach"}, Spec: spec("team-a")}, client.DryRunAll)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a NodeWright on team-a's pool by team-b's ServiceAccount: %v; want refused naming spec.nodeSelectors", err)
	}
	if err := tenant.Create(ctx, &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "own"}, Spec: spec("team-b")}, client.DryRunAll); err != nil {
		t.Errorf("a Skyhook on team-b's own pool was refused: %v", err)
	}
	if err := c.Create(ctx, &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "admin"}, Spec: spec("team-a")}, client.DryRunAll); err != nil {
		t.Errorf("the admin, in no tenant entry, was refused: %v", err)
	}
}

func mustCreate(t *testing.T, c client.Client, o client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), o) })
}
