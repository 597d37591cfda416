package leastprivilege

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/gitserver"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config/helm"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// fleetYAML is the Skyhook pushed to Git: a package that reboots and one
// that restarts a service, on four nodes two at a time.
var fleetYAML = fmt.Sprintf(`apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: least-privilege}
spec:
  nodeSelectors: {matchLabels: {pool: least-privilege}}
  interruptionBudget: {count: 2}
  packages:
    driver:
      version: "1.0.0"
      image: ghcr.io/example/driver
      interrupt: {type: reboot}
      env: [{name: %[1]s, value: 200ms}]
    tuning:
      version: "1.0.0"
      image: ghcr.io/example/tuning
      interrupt: {type: service, services: [containerd]}
      env: [{name: %[1]s, value: 200ms}]
`, simnode.DurationEnv)

// A rollout with a reboot (a drain evicting a workload) and a service
// restart, fed by a PackageSet from Git, runs to the end with the operator holding only the shipped roles;
// pruning the Skyhook (its finalizer) and the chart's cleanup, as the same
// account, work too. Not one request is forbidden.
func TestRolloutNeedsNothingBeyondTheShippedRoles(t *testing.T) {
	ctx := context.Background()
	c := testenv.Client(t, env)
	assertRestricted(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("requests the apiserver forbade the operator's account: %v", forbidden.all())
		}
	})
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}}); err != nil {
		t.Fatal(err)
	}
	// A workload on lp-0 that the reboot's drain evicts.
	workload := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "workload", Namespace: "fleet"},
		Spec:       corev1.PodSpec{NodeName: "lp-0", Containers: []corev1.Container{{Name: "app", Image: "example.com/app"}}},
	}
	if err := c.Create(ctx, workload); err != nil {
		t.Fatal(err)
	}
	url, err := git.Create("fleet")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitserver.Push(t.TempDir(), url, map[string]string{"skyhooks/fleet.yaml": fleetYAML}, "fleet"); err != nil {
		t.Fatal(err)
	}
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "fleet"},
		Spec: sourcev1.GitRepositorySpec{URL: url, Interval: metav1.Duration{Duration: time.Minute},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
	}
	set := &skyhookv1.PackageSet{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "fleet"},
		Spec: skyhookv1.PackageSetSpec{SourceRef: skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
			Path: "skyhooks", Interval: metav1.Duration{Duration: time.Hour}, RetryInterval: &metav1.Duration{Duration: 2 * time.Second}, Prune: true},
	}
	for _, obj := range []client.Object{repo, set} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	testenv.Eventually(t, "the rollout to complete on the 4 nodes", 3*time.Minute, func() bool {
		sk := &skyhookv1.Skyhook{}
		return c.Get(ctx, client.ObjectKey{Name: "least-privilege"}, sk) == nil && conditions.IsReady(sk) &&
			sk.Status.ObservedGeneration == sk.Generation && sk.Status.Status == skyhookv1.StatusComplete
	})
	for i := range 4 {
		var node corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: fmt.Sprintf("lp-%d", i)}, &node); err != nil {
			t.Fatal(err)
		}
		record := node.Annotations[skyhookv1.NodeStateAnnotation("least-privilege")]
		if !strings.Contains(record, `"driver|1.0.0"`) || !strings.Contains(record, `"tuning|1.0.0"`) || node.Spec.Unschedulable {
			t.Errorf("node %s: record %s, cordoned %v", node.Name, record, node.Spec.Unschedulable)
		}
	}

	if err := c.Get(ctx, client.ObjectKeyFromObject(workload), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("the workload on lp-0 was not drained: %v", err)
	}

	// The PackageSet goes; pruning deletes the Skyhook through its finalizer.
	if err := c.Delete(ctx, set); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the pruned Skyhook to be gone", time.Minute, func() bool {
		return c.Get(ctx, client.ObjectKey{Name: "least-privilege"}, &skyhookv1.Skyhook{}) != nil
	})

	// The chart's pre-delete hook runs as the same account.
	var out strings.Builder
	cleanupCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := operator.Cleanup(cleanupCtx, operatorConfig, operator.CleanupOptions{Certs: operator.CertsSelfManaged, Out: &out}); err != nil {
		t.Errorf("cleanup as %s/%s: %v\n%s", helm.Default.Namespace, serviceAccount, err, out.String())
	}

	if denied := forbidden.all(); len(denied) > 0 {
		t.Errorf("the apiserver forbade the operator's account:\n%s", strings.Join(denied, "\n"))
	}
}

// assertRestricted checks that the operator's identity is really the
// restricted account and that a refusal is recorded, then forgets it.
func assertRestricted(t *testing.T) {
	t.Helper()
	operatorClient, err := client.New(operatorConfig, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = operatorClient.List(context.Background(), &corev1.SecretList{}, client.InNamespace("kube-system"))
	if !apierrors.IsForbidden(err) || len(forbidden.all()) != 1 {
		t.Fatalf("reading Secrets in kube-system as the operator: %v, recorded %v; want forbidden and recorded", err, forbidden.all())
	}
	forbidden.forget()
}
