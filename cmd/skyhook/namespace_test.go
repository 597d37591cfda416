package main

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// operatorDeployment makes a Deployment (no replicas) in the namespace
// (made when missing) as the charts label the operator's, with the image,
// and, when version is not empty, the version ConfigMap the operator
// publishes; both are deleted when the test ends.
func operatorDeployment(t *testing.T, ns, image, version string) *appsv1.Deployment {
	t.Helper()
	ctx := context.Background()
	c := testenv.Client(t, env)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	labels := map[string]string{"control-plane": "controller-manager"}
	zero := int32(0)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "controller-manager", Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: &zero, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: image}}}}}}
	objs := []client.Object{d}
	if version != "" {
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: operator.VersionConfigMap, Namespace: ns,
			Labels: map[string]string{operator.VersionLabel: "true"}}, Data: map[string]string{"version": version}})
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
	}
	return d
}

// Without -n the operator's namespace is nodewright, then skyhook (with a
// note), then skyhook-system, then wherever an operator Deployment is,
// then every namespace; -n is used as given; the answer is kept for the
// invocation.
func TestOperatorNamespace(t *testing.T) {
	operatorDeployment(t, "skyhook-system", "busybox:1.36", "") // a controller manager, but not the operator
	operatorDeployment(t, "ops-elsewhere", "ghcr.io/skyhook-go/skyhook-operator:1.2.3", "1.2.3")
	operatorDeployment(t, "ops-stale", "busybox:1.36", "0.0.1") // a version left behind, no operator
	if out := mustRun(t, "version"); !strings.Contains(out, "operator: 1.2.3 (namespace ops-elsewhere)\n") || strings.Contains(out, "ops-stale") {
		t.Errorf("version with the operator in another namespace:\n%s", out)
	}
	// Not allowed to list Deployments everywhere: the search is skipped
	// silently, and every namespace is looked in.
	if out := mustRun(t, "--as", nodesOnlyUser(t), "version"); !strings.Contains(out, "operator: unknown (") || !strings.Contains(out, `cannot list resource "configmaps"`) ||
		strings.Contains(out, "deployments") {
		t.Errorf("version without the right to list Deployments:\n%s", out)
	}

	operatorDeployment(t, "skyhook", "nvcr.io/nvidia/skyhook/operator:v0.17.0", "0.17.0")
	if out := mustRun(t, "version"); !strings.Contains(out, "Note: using the operator in namespace \"skyhook\"") || !strings.Contains(out, "operator: 0.17.0 (namespace skyhook)\n") {
		t.Errorf("version with the operator in skyhook:\n%s", out)
	}
	if out := mustRun(t, "-n", "skyhook", "version"); strings.Contains(out, "Note:") {
		t.Errorf("version -n skyhook notes the namespace:\n%s", out)
	}
	nodewright := operatorDeployment(t, "nodewright", "ghcr.io/nvidia/nodewright/operator:v0.20.0", "")
	if out := mustRun(t, "version"); strings.Contains(out, "Note:") || !strings.Contains(out, "operator: none running in namespace nodewright\n") {
		t.Errorf("version with the operator in nodewright:\n%s", out)
	}
	if out := mustRun(t, "-n", "ops-elsewhere", "version"); !strings.Contains(out, "operator: 1.2.3 (namespace ops-elsewhere)\n") {
		t.Errorf("version -n ops-elsewhere:\n%s", out)
	}

	// Found once per invocation.
	c := testenv.Client(t, env)
	cmd := newRootCommand()
	if ns := operatorNamespace(context.Background(), cmd, c); ns != "nodewright" {
		t.Fatalf("found %q, want nodewright", ns)
	}
	if err := c.Delete(context.Background(), nodewright); err != nil {
		t.Fatal(err)
	}
	if ns := operatorNamespace(context.Background(), cmd, c); ns != "nodewright" {
		t.Errorf("found %q the second time in one invocation, want nodewright again", ns)
	}
	if ns := operatorNamespace(context.Background(), newRootCommand(), c); ns != "skyhook" {
		t.Errorf("a new invocation found %q, want skyhook", ns)
	}
}
