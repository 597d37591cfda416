package webhook_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/testenv"
	"github.com/skyhook-go/skyhook/webhook/policy"
)

// What is stored is what runs: the mutating webhook names packages after
// their keys and splits a matching tag, and a digest, out of the image.
func TestMutatingWebhookStoresDefaults(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	obj := decode(t, `
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: mutated}
spec:
  packages:
    tagged: {version: 1.1.1, image: "ghcr.io/nvidia/skyhook-packages/shellscript:1.1.1"}
    pinned: {version: 2.0.0, image: "registry.local:5000/pinned@sha256:1111111111111111111111111111111111111111111111111111111111111111"}
`)
	if err := c.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, obj) })
	var got skyhookv1.Skyhook
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &got); err != nil {
		t.Fatal(err)
	}
	tagged, pinned := got.Spec.Packages["tagged"], got.Spec.Packages["pinned"]
	if tagged.Name != "tagged" || tagged.Image != "ghcr.io/nvidia/skyhook-packages/shellscript" {
		t.Errorf("tagged stored as name %q image %q", tagged.Name, tagged.Image)
	}
	if pinned.Image != "registry.local:5000/pinned" || pinned.ContainerSHA != "sha256:1111111111111111111111111111111111111111111111111111111111111111" {
		t.Errorf("pinned stored as image %q containerSHA %q", pinned.Image, pinned.ContainerSHA)
	}
}

// Where NodeWright accepts, admission accepts and warns: a tag that
// disagrees with the version is dropped (the version runs), and cancelling
// an uninstall says that nodes install the package again.
func TestAdmissionWarnsWhereUpstreamAccepts(t *testing.T) {
	c, warnings := testenv.WarningClient(t, env)
	ctx := context.Background()
	obj := decode(t, `
apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: warned}
spec:
  packages:
    tuning: {version: 1.0.1, image: "registry.local:5000/tuning:1.0.0", uninstall: {enabled: true, apply: true}}
`)
	if err := c.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, obj) })
	want := `spec.packages.tuning.image: the tag "1.0.0" disagrees with version "1.0.1"; the version wins and registry.local:5000/tuning:1.0.1 runs`
	if got := warnings(); len(got) != 1 || got[0] != want {
		t.Fatalf("warnings %q, want %q", got, want)
	}
	var stored skyhookv1.Skyhook
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &stored); err != nil {
		t.Fatal(err)
	}
	if img := stored.Spec.Packages["tuning"].Image; img != "registry.local:5000/tuning" {
		t.Errorf("stored image %q, want the repository without the tag", img)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // the operator adds its finalizer meanwhile
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &stored); err != nil {
			return err
		}
		stored.Spec.Packages["tuning"].Uninstall.Apply = false
		return c.Update(ctx, &stored)
	})
	if err != nil {
		t.Fatal(err)
	}
	// A conflicting update (the operator adds its finalizer) is retried,
	// and each try is admitted with the warning.
	if got := warnings(); len(got) < 2 || !strings.Contains(got[len(got)-1], "spec.packages.tuning.uninstall.apply: the uninstall is cancelled") {
		t.Errorf("warnings %q, want the cancelled uninstall named", got)
	}
	afterCancel := len(warnings())

	// The shipped image policies audit: admitted, with a warning and an
	// event; a refused request still carries its warnings.
	audited := decode(t, pkg("version: 1.0.0\nimage: alpine"))
	audited.SetName("audited")
	if err := c.Create(ctx, audited); err != nil {
		t.Fatalf("an image the shipped policies audit was refused: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, audited) })
	if got := strings.Join(warnings()[afterCancel:], "\n"); !strings.Contains(got, `spec.packages.tuning.image: Invalid value: "alpine": policy require-registry-host (Audit)`) ||
		!strings.Contains(got, "policy deny-docker-hub (Audit)") {
		t.Errorf("warnings %q, want both shipped policies' audits", got)
	}
	testenv.WaitWarning(t, env, "audited", "PolicyViolation", "policy require-registry-host (Audit)")
	before := len(warnings())
	refused := decode(t, pkg("version: latest\nimage: alpine"))
	refused.SetName("refused")
	if err := c.Create(ctx, refused, client.DryRunAll); err == nil {
		t.Fatal("version latest accepted")
	}
	if got := warnings()[before:]; len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), "(Audit)") {
		t.Errorf("the refusal carried warnings %q, want the audits too", got)
	}
}

// A DeploymentPolicy that Skyhooks use cannot be deleted; the refusal names
// them. Once they let go, it can.
func TestReferencedDeploymentPolicyCannotBeDeleted(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	dp := ensure(t, c, policyManifest("  default: {budget: {count: 1}}\n"), "in-use")
	var users []*skyhookv1.Skyhook
	for _, name := range []string{"user-b", "user-a"} {
		sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: skyhookv1.SkyhookSpec{DeploymentPolicy: "in-use"}}
		if err := c.Create(ctx, sk); err != nil {
			t.Fatal(err)
		}
		users = append(users, sk)
	}
	err := c.Delete(ctx, dp)
	requireOutcome(t, err, []string{"deploymentpolicies.skyhook.nvidia.com \"in-use\" is forbidden", `cannot delete DeploymentPolicy "in-use": still referenced by 2 Skyhook(s): [user-a user-b]`})

	for _, sk := range users {
		if err := c.Delete(ctx, sk); err != nil {
			t.Fatal(err)
		}
	}
	// The Skyhooks go once their finalizers are removed by the reconciler.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.Delete(ctx, dp) == nil, nil
	})
	if err != nil {
		t.Fatal("the policy could not be deleted after its Skyhooks were")
	}
}

// Admins add a policy at run time with a labelled ConfigMap, and remove it
// the same way, without restarting the operator.
func TestPolicyFromConfigMapAppliesWithoutRestart(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	candidate := pkg("version: 1.0.0\nimage: untrusted.example.com/tuning")
	if err := c.Create(ctx, decode(t, candidate), client.DryRunAll); err != nil {
		t.Fatalf("refused before any admin policy: %v", err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "trusted-registries", Namespace: operatorNamespace, Labels: map[string]string{policy.Label: "true"}},
		Data: map[string]string{"trusted.yaml": `
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: trusted-registries
spec:
  rules:
  - name: only-ghcr
    match:
      any:
      - apiVersion: skyhook.nvidia.com/v1alpha1
        kind: Skyhook
    assert:
      all:
      - message: package images must come from ghcr.io
        check:
          ~.($packages):
            image:
              (starts_with(@, 'ghcr.io/')): true
`},
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the ConfigMap policy to refuse the image", 15*time.Second, func() bool {
		err := c.Create(ctx, decode(t, candidate), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "policy trusted-registries, rule only-ghcr: package images must come from ghcr.io")
	})
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the policy to be unloaded", 15*time.Second, func() bool {
		return c.Create(ctx, decode(t, candidate), client.DryRunAll) == nil
	})
}
