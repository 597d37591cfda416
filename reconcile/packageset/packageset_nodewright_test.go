package packageset_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// A set of NodeWright's kinds is applied as one of the seeds': the policy
// of NodeWright's group first, then the NodeWright naming it, waited for
// until Ready; a Skyhook's policy of the same name is another object.
func TestPackageSetAppliesNodeWrights(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "nodewrights"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	nodeWright := strings.NewReplacer("skyhook.nvidia.com", "nodewright.nvidia.com", "kind: Skyhook", "kind: NodeWright").
		Replace(skyhookUnderPolicy("ps-nw", "ps-nw-policy", "1.0.0"))
	nwPolicy := strings.NewReplacer("skyhook.nvidia.com", "nodewright.nvidia.com", "ps-policy", "ps-nw-policy").Replace(policyManifest)
	seedsPolicy := strings.Replace(policyManifest, "ps-policy", "ps-nw-policy", 1)
	src := newSource(t, "nodewrights", "nodewrights-repo")
	src.publish("main@sha1:1111", map[string]string{
		"sets/a-nodewright.yaml":   nodeWright,
		"sets/b-policy.yaml":       nwPolicy,
		"sets/c-seeds-policy.yaml": seedsPolicy,
	})
	ps := &skyhookv1.PackageSet{
		ObjectMeta: metav1.ObjectMeta{Name: "nodewrights", Namespace: "nodewrights"},
		Spec: skyhookv1.PackageSetSpec{
			SourceRef: skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "nodewrights-repo"},
			Path:      "sets", Interval: metav1.Duration{Duration: time.Hour}, RetryInterval: &metav1.Duration{Duration: time.Second},
			Prune: true, Wait: true, Timeout: &metav1.Duration{Duration: 30 * time.Second},
		},
	}
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ps) })
	got := waitPackageSet(t, client.ObjectKeyFromObject(ps), func(p *skyhookv1.PackageSet) bool {
		return conditions.IsReady(p) && p.Status.LastAppliedRevision == "main@sha1:1111"
	})
	var ids []string
	for _, e := range got.Status.Inventory.Entries {
		ids = append(ids, e.ID)
	}
	if strings.Join(ids, " ") != "_ps-nw-policy_nodewright.nvidia.com_DeploymentPolicy _ps-nw-policy_skyhook.nvidia.com_DeploymentPolicy _ps-nw_nodewright.nvidia.com_NodeWright" {
		t.Errorf("inventory %v", ids)
	}
	nw := &nodewrightv1.NodeWright{}
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-nw"}, nw); err != nil || nw.Spec.DeploymentPolicy != "ps-nw-policy" || !conditions.IsReady(nw) {
		t.Fatalf("the NodeWright: %v, %+v", err, nw.Status)
	}
}
