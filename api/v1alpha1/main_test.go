package v1alpha1_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/test/clustertest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// These tests run against a real kube-apiserver with the generated CRDs, so
// they check the schema the cluster enforces, not the Go types alone.

var env *cluster.Cluster

func TestMain(m *testing.M) {
	crds, err := config.CRDs()
	if err != nil {
		panic(err)
	}
	os.Exit(clustertest.Main(m, cluster.Options{CRDs: crds}, &env))
}

func k8sClient(t *testing.T) client.Client { return testenv.Client(t, env) }

// fromYAML decodes one object.
func fromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// cleanup deletes obj when the test ends.
func cleanup(t *testing.T, c client.Client, obj client.Object) {
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting %s: %v", obj.GetName(), err)
		}
	})
}

// requireRejected asserts that err is an Invalid error from the apiserver
// with a cause on field whose message contains rule.
func requireRejected(t *testing.T, err error, field, rule string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted; want a rejection of %s (%s)", field, rule)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid error from the apiserver, got %v", err)
	}
	var causes []string
	if details := status.Status().Details; details != nil {
		for _, cause := range details.Causes {
			if cause.Field == field && strings.Contains(cause.Message, rule) {
				return
			}
			causes = append(causes, cause.Field+": "+cause.Message)
		}
	}
	t.Fatalf("no cause on %s containing %q; causes:\n  %s", field, rule, strings.Join(causes, "\n  "))
}

// rejection is a manifest the apiserver must refuse, with the field and rule
// its error must name.
type rejection struct {
	name, spec, field, rule string
}

// requireRejections creates manifest(name, spec) for each case and asserts
// the apiserver refuses it as the case says.
func requireRejections(t *testing.T, cases []rejection, manifest func(name, spec string) string) {
	t.Helper()
	c := k8sClient(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := fromYAML(t, manifest(fmt.Sprintf("invalid-%d", i), tc.spec))
			err := c.Create(context.Background(), obj)
			if err == nil {
				cleanup(t, c, obj)
			}
			requireRejected(t, err, tc.field, tc.rule)
		})
	}
}

// createAndGet creates the manifest and reads it back into into.
func createAndGet(t *testing.T, c client.Client, manifest string, into client.Object) {
	t.Helper()
	obj := fromYAML(t, manifest)
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	cleanup(t, c, obj)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), into); err != nil {
		t.Fatal(err)
	}
}

// manifestOf returns a builder of kind objects of the skyhook.nvidia.com
// group (namespaced when namespace is set) from a name and a spec indented
// by two spaces.
func manifestOf(kind, namespace string) func(name, spec string) string {
	return groupManifestOf("skyhook.nvidia.com", kind, namespace)
}

// groupManifestOf is manifestOf for a kind of the group.
func groupManifestOf(group, kind, namespace string) func(name, spec string) string {
	return func(name, spec string) string {
		meta := "  name: " + name
		if namespace != "" {
			meta += "\n  namespace: " + namespace
		}
		return fmt.Sprintf("apiVersion: %s/v1alpha1\nkind: %s\nmetadata:\n%s\nspec:\n%s", group, kind, meta, spec)
	}
}

var (
	skyhookYAML          = manifestOf("Skyhook", "")
	policyYAML           = manifestOf("DeploymentPolicy", "")
	packageSetYAML       = manifestOf("PackageSet", "default")
	nodeWrightYAML       = groupManifestOf("nodewright.nvidia.com", "NodeWright", "")
	nodeWrightPolicyYAML = groupManifestOf("nodewright.nvidia.com", "DeploymentPolicy", "")
)
