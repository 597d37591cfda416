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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// skyhookUnderPolicy is a Skyhook naming a DeploymentPolicy.
func skyhookUnderPolicy(name, policy, version string) string {
	return strings.Replace(skyhookManifest(name, version), "spec:\n", "spec:\n  deploymentPolicy: "+policy+"\n", 1)
}

// A revision that brings a DeploymentPolicy and a Skyhook naming it is
// applied (admission refuses a Skyhook naming a policy that does not exist,
// so the policy goes first); a revision whose Skyhook is refused for
// another reason applies nothing, not even its new policy.
func TestPackageSetAppliesAPolicyBeforeTheSkyhookNamingIt(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ordered"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	src := newSource(t, "ordered", "ordered-repo")
	// The Skyhook's file sorts before the policy's.
	src.publish("main@sha1:1111", map[string]string{
		"sets/a-skyhook.yaml": skyhookUnderPolicy("ps-ordered", "ps-ordered-policy", "1.0.0"),
		"sets/b-policy.yaml":  strings.Replace(policyManifest, "ps-policy", "ps-ordered-policy", 1),
	})
	ps := &skyhookv1.PackageSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ordered", Namespace: "ordered"},
		Spec: skyhookv1.PackageSetSpec{
			SourceRef: skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "ordered-repo"},
			Path:      "sets", Interval: metav1.Duration{Duration: time.Hour}, RetryInterval: &metav1.Duration{Duration: time.Second}, Prune: true,
		},
	}
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ps) })
	key := client.ObjectKeyFromObject(ps)
	waitPackageSet(t, key, func(p *skyhookv1.PackageSet) bool {
		return conditions.IsReady(p) && p.Status.LastAppliedRevision == "main@sha1:1111"
	})
	sk := &skyhookv1.Skyhook{}
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-ordered"}, sk); err != nil || sk.Spec.DeploymentPolicy != "ps-ordered-policy" {
		t.Fatalf("the Skyhook under the new policy: %v %q", err, sk.Spec.DeploymentPolicy)
	}

	src.publish("main@sha1:2222", map[string]string{
		"sets/a-skyhook.yaml": skyhookUnderPolicy("ps-ordered", "ps-ordered-next", "not-a-version"),
		"sets/b-policy.yaml":  strings.Replace(policyManifest, "ps-policy", "ps-ordered-next", 1),
	})
	got := waitPackageSet(t, key, func(p *skyhookv1.PackageSet) bool {
		return p.Status.LastAttemptedRevision == "main@sha1:2222" && conditions.IsStalled(p)
	})
	if msg := conditions.GetMessage(got, meta.ReadyCondition); !strings.Contains(msg, "spec.packages.tuning.version") || strings.Contains(msg, "not found") {
		t.Errorf("the refusal names %q; want the bad version and not the policy that is in the revision", msg)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-ordered-next"}, &skyhookv1.DeploymentPolicy{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused revision's policy was applied: %v", err)
	}
}
