package fluxkustomize

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/gitserver"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// kustomizationName is the Kustomization of every fleet, in the fleet's
// namespace.
const kustomizationName = "skyhooks"

// fleet is a Git repository of Skyhook manifests, with a GitRepository and
// the Kustomization "skyhooks" that applies its skyhooks/ directory, in a
// namespace of the same name. DeploymentPolicies that its Skyhooks name go
// in policies/, applied by a Kustomization "policies" that "skyhooks"
// depends on: a Kustomization dry-runs all its objects before applying
// any, and admission refuses a Skyhook naming a policy that does not exist
// yet (TestSkyhookAndItsNewPolicyInOneKustomizationAreRefused).
type fleet struct {
	ns, url, work string
}

// newFleet pushes the first revision of the files, creates the namespace,
// the GitRepository and the Kustomizations, "skyhooks" health checking the
// named Skyhooks, and returns the fleet and the commit. Deleting the
// Kustomizations when the test ends prunes what they applied.
func newFleet(t *testing.T, ns string, files map[string]string, healthChecked ...string) (*fleet, string) {
	t.Helper()
	url, err := git.Create(ns)
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{ns: ns, url: url, work: t.TempDir()}
	commit := f.push(t, files, "first")
	c := testenv.Client(t, env)
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	withPolicies := false
	for path := range files {
		withPolicies = withPolicies || strings.HasPrefix(path, "policies/")
	}
	manifest := filepath.Join(t.TempDir(), "flux.yaml")
	if err := os.WriteFile(manifest, []byte(fluxYAML(ns, url, withPolicies, healthChecked)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := env.Kubectl("apply", "-f", manifest); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Cleanup(func() {
		_, _ = env.Kubectl("delete", "-n", ns, "kustomizations,gitrepositories", "--all", "--wait=false")
	})
	t.Cleanup(func() { // first, while they exist
		if t.Failed() {
			out, _ := env.Kubectl("get", "-n", ns, "kustomizations,gitrepositories", "-o", "yaml")
			t.Logf("the Flux objects:\n%s", out)
		}
	})
	return f, commit
}

// push replaces the repository's files with these and returns the commit.
func (f *fleet) push(t *testing.T, files map[string]string, message string) string {
	t.Helper()
	commit, err := gitserver.Push(f.work, f.url, files, message)
	if err != nil {
		t.Fatal(err)
	}
	return commit
}

// fluxYAML is the GitRepository and the Kustomizations, with the health
// checks of docs/api.md for each named Skyhook.
func fluxYAML(ns, url string, withPolicies bool, skyhooks []string) string {
	var checks strings.Builder
	for _, name := range skyhooks {
		fmt.Fprintf(&checks, "  - apiVersion: skyhook.nvidia.com/v1alpha1\n    kind: Skyhook\n    name: %s\n", name)
	}
	var policies, dependsOn string
	if withPolicies {
		policies = fmt.Sprintf(`---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: policies, namespace: %[1]s}
spec:
  sourceRef: {kind: GitRepository, name: %[1]s}
  path: ./policies
  interval: 10m
  prune: true
`, ns)
		dependsOn = "  dependsOn: [{name: policies}]\n"
	}
	return fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: %[1]s, namespace: %[1]s}
spec:
  url: %[2]s
  interval: 2s
  ref: {branch: main}
%[5]s---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: %[3]s, namespace: %[1]s}
spec:
  sourceRef: {kind: GitRepository, name: %[1]s}
  path: ./skyhooks
%[6]s  interval: 10m
  retryInterval: 1m
  timeout: 3m
  prune: true
  wait: false
  healthChecks:
%[4]s  healthCheckExprs:
  - apiVersion: skyhook.nvidia.com/v1alpha1
    kind: Skyhook
    current: status.observedGeneration == metadata.generation && status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')
    failed: status.conditions.exists(c, c.type == 'Stalled' && c.status == 'True')
`, ns, url, kustomizationName, checks.String(), policies, dependsOn)
}

// oneAtATime is a Skyhook's budget of one node at a time.
const oneAtATime = "interruptionBudget: {count: 1}"

// skyhookYAML is a Skyhook with one package on the nodes of pool, paced by
// a budget or a DeploymentPolicy (a line of its spec), whose stage pods
// get env (the simulation's knobs).
func skyhookYAML(name, pool, pacing, version string, env map[string]string) string {
	var vars strings.Builder
	if len(env) > 0 {
		vars.WriteString("      env:\n")
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		fmt.Fprintf(&vars, "      - {name: %s, value: %q}\n", k, env[k])
	}
	return fmt.Sprintf(`apiVersion: skyhook.nvidia.com/v1alpha1
kind: Skyhook
metadata: {name: %s}
spec:
  nodeSelectors: {matchLabels: {pool: %s}}
  %s
  packages:
    tuning:
      version: %q
      image: ghcr.io/x/tuning
%s`, name, pool, pacing, version, vars.String())
}

// policyYAML is a DeploymentPolicy starting one node at a time that halts
// the rollout at the first failed batch, so a failure stalls the Skyhook
// at once instead of after the stage's retries.
func policyYAML(name string) string {
	return fmt.Sprintf(`apiVersion: skyhook.nvidia.com/v1alpha1
kind: DeploymentPolicy
metadata: {name: %s}
spec:
  default:
    budget: {count: 1}
    strategy: {fixed: {initialBatch: 1, batchThreshold: 100, failureThreshold: 1, safetyLimit: 50}}
`, name)
}

// stageTime makes every stage pod take d.
func stageTime(d string) map[string]string { return map[string]string{simnode.DurationEnv: d} }

// kustomizationStatus is what the tests read of a Kustomization's status.
type kustomizationStatus struct {
	Conditions            []metav1.Condition `json:"conditions"`
	LastAppliedRevision   string             `json:"lastAppliedRevision"`
	LastAttemptedRevision string             `json:"lastAttemptedRevision"`
}

// kustomization reads the fleet's Kustomization's status (the project
// does not link kustomize-controller's api module).
func (f *fleet) kustomization(t *testing.T) kustomizationStatus {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
	u.SetKind("Kustomization")
	if err := testenv.Client(t, env).Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: kustomizationName}, u); err != nil {
		t.Fatal(err)
	}
	var st kustomizationStatus
	if raw, ok := u.Object["status"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// condition finds a condition by type (a zero one when absent).
func condition(conds []metav1.Condition, typ string) metav1.Condition {
	for _, c := range conds {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

// getSkyhook reads a Skyhook (an empty one when it does not exist yet).
func getSkyhook(t *testing.T, name string) *skyhookv1.Skyhook {
	t.Helper()
	sk := &skyhookv1.Skyhook{}
	if err := testenv.Client(t, env).Get(context.Background(), client.ObjectKey{Name: name}, sk); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return sk
}
